import t from 'tap';
import { chargedUsage, estimateUsage } from '../src/react/charged-usage.js';
import { MAX_CALL_TOKENS } from '../src/react/reported-usage.js';

const estimate = () => ({ promptTokens: 40, completionTokens: 3 });

t.test('reported counts are charged as they are, clamped again whatever client made them', async (t) => {
  t.strictSame(chargedUsage({ promptTokens: 11, completionTokens: 7 }, estimate), {
    promptTokens: 11,
    completionTokens: 7,
  });
  t.strictSame(chargedUsage({ promptTokens: -3, completionTokens: 1e308 }), {
    promptTokens: 0,
    completionTokens: MAX_CALL_TOKENS,
  });
  t.strictSame(chargedUsage({ promptTokens: Number.NaN, completionTokens: 2.5 }), {
    promptTokens: 0,
    completionTokens: 2,
  });
});

t.test('with a budget, a call that counts no token is charged the estimate, marked so', async (t) => {
  t.strictSame(chargedUsage({ promptTokens: 0, completionTokens: 0 }, estimate), {
    promptTokens: 40,
    completionTokens: 3,
    estimated: true,
  });
  t.strictSame(chargedUsage({ promptTokens: 0, completionTokens: 0 }), {
    promptTokens: 0,
    completionTokens: 0,
  });
});

t.test('the estimate is a token per four bytes, at least one each', async (t) => {
  const messages = [{ role: 'user' as const, content: 'x'.repeat(400) }];
  const usage = estimateUsage(messages, { content: 'y'.repeat(41), toolCalls: [] });
  t.equal(usage.completionTokens, 11);
  t.ok(usage.promptTokens >= 100 && usage.promptTokens < 110, `prompt ${usage.promptTokens}`);
  const empty = estimateUsage([], { content: null, toolCalls: [] });
  t.strictSame(empty, { promptTokens: 1, completionTokens: 1 });
  const calls = estimateUsage([], { content: null, toolCalls: [{ name: 'echo', arguments: '{"a":1234}' }] });
  t.equal(calls.completionTokens, 4);
});
