// A parent whose child answered 200 KB holds that answer only as a reference to its tree's texts
// (issue 24, item 9). When its runner is SIGKILLed during its next model call, the runner that
// takes it over replays the records from Redis: the model call it re-issues must carry the tool
// message whole, as the first attempt did. Asserted by the exact requests the fake model received.
import { DEFAULT_MAX_RESULT_BYTES, keyLayout, truncateResult } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { runnerOfCall, runnerPid } from '../support/runner-pid.js';
import { twoRunners } from '../support/two-runners.js';
import { waitUntil } from '../support/wait-until.js';

const ANSWER = `child:${'c'.repeat(200_000)}`;

t.test("a parent replayed after a crash gives its model the child's large answer whole", async (t) => {
  let attempts = 0;
  const { mesh } = await twoRunners(t, (r) => {
    if (r.agent === 'child') return { final: ANSWER };
    if (turnOf(r) === 0) return { calls: [{ name: '_subagent_child', args: { prompt: 'x' } }] };
    // The first attempt of turn 1 is slow enough to kill its runner during it.
    attempts++;
    return {
      final: `parent got ${(r.messages.at(-1)!.content ?? '').length} chars`,
      latencyMs: attempts === 1 ? 3000 : 0,
    };
  });
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  const id = started.json.id as string;
  await waitUntil(
    async () => mesh.model.of('parent').length === 2,
    30_000,
    () => "the parent's second model call",
  );
  const keys = keyLayout(mesh.prefix);
  const delegation = Object.values(await mesh.client.hgetall(keys.calls(id, id))).find((r) =>
    r.includes('"kind":"subagent"'),
  )!;
  t.notOk(delegation.includes('cccc'), "the parent's record holds a reference, not the text");
  process.kill(runnerPid(await runnerOfCall(mesh, id, 't1-model')), 'SIGKILL');
  const done = await mesh.waitForStatus(id, 'succeeded', 60_000, () => 'the parent to finish elsewhere');
  const cut = truncateResult(ANSWER, DEFAULT_MAX_RESULT_BYTES);
  t.equal(done.output, `parent got ${cut.length} chars`);
  const turns = mesh.model.of('parent');
  t.same(turns.map(turnOf), [0, 1, 1], 'the call in doubt was re-issued once');
  t.equal(turns[1]!.messages.at(-1)!.content, cut, 'the first attempt got the tool message');
  t.equal(turns[2]!.messages.at(-1)!.content, cut, 'and the replay, rebuilt from the records, the same');
});
