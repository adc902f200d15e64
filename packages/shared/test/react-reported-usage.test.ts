import t from 'tap';
import { MAX_CALL_TOKENS, reportedUsage, tokenCount } from '../src/react/reported-usage.js';

t.test('a count is an integer in [0, MAX_CALL_TOKENS]; what is no number is absent', async (t) => {
  t.equal(tokenCount(12), 12);
  t.equal(tokenCount(12.9), 12);
  t.equal(tokenCount(-5), 0);
  t.equal(tokenCount(-0), 0);
  t.equal(tokenCount(1e308), MAX_CALL_TOKENS);
  t.equal(tokenCount(Number.POSITIVE_INFINITY), MAX_CALL_TOKENS);
  t.equal(tokenCount(Number.NEGATIVE_INFINITY), 0);
  for (const v of [Number.NaN, '12', null, undefined, {}, true]) t.equal(tokenCount(v), undefined, String(v));
});

t.test('usage with both parts keeps them, clamped', async (t) => {
  t.strictSame(reportedUsage({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }), {
    promptTokens: 11,
    completionTokens: 7,
  });
  t.strictSame(reportedUsage(JSON.parse('{"prompt_tokens": 1e999, "completion_tokens": -1e308}')), {
    promptTokens: MAX_CALL_TOKENS,
    completionTokens: 0,
  });
});

t.test('total_tokens stands in for the parts a usage lacks', async (t) => {
  t.strictSame(reportedUsage({ total_tokens: 500 }), { promptTokens: 500, completionTokens: 0 });
  t.strictSame(reportedUsage({ prompt_tokens: 30, total_tokens: 100 }), {
    promptTokens: 30,
    completionTokens: 70,
  });
  t.strictSame(reportedUsage({ completion_tokens: 30, total_tokens: 100 }), {
    promptTokens: 70,
    completionTokens: 30,
  });
  t.strictSame(reportedUsage({ prompt_tokens: 300, total_tokens: 100 }), {
    promptTokens: 300,
    completionTokens: 0,
  });
  t.strictSame(reportedUsage({ prompt_tokens: 5 }), { promptTokens: 5, completionTokens: 0 });
});

t.test('a usage without one usable count is no usage', async (t) => {
  for (const raw of [undefined, null, {}, [], 'x', 12, { prompt_tokens: '5000' }, { total_tokens: null }])
    t.equal(reportedUsage(raw), undefined, JSON.stringify(raw));
});
