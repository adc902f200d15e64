import t from 'tap';
import { CallBatch } from '../src/loop/steps/code-agent/call-batch.js';

t.test(
  'calls past the per-turn cap are refused too_many_calls, delegations among them too_many_delegations',
  async (t) => {
    const batch = new CallBatch({ maxCallsPerTurn: 4, maxDelegationsPerTurn: 2 });
    const verdicts = (['subagent', 'step', 'subagent', 'subagent', 'step', 'subagent'] as const).map(
      (kind) => batch.admit(kind)?.code ?? 'ok',
    );
    t.strictSame(verdicts, ['ok', 'ok', 'ok', 'too_many_delegations', 'too_many_calls', 'too_many_calls']);
  },
);

t.test('a result reaching the code starts a new batch', async (t) => {
  const batch = new CallBatch({ maxCallsPerTurn: 1, maxDelegationsPerTurn: 1 });
  t.equal(batch.admit('subagent'), undefined);
  t.equal(batch.admit('step')?.code, 'too_many_calls');
  batch.reset();
  t.equal(batch.admit('subagent'), undefined);
  t.match(batch.admit('subagent'), {
    code: 'too_many_calls',
    message: 'At most 1 calls (ctx.subagent and ctx.step) may be started together.',
  });
});
