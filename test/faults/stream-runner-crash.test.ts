// A runner SIGKILLed while its model call streams into a watched tree: the call in doubt is
// re-issued by another runner, whose first delta of it says `reset: true` with seq 0, and the
// deltas since that reset add up to the reply finally recorded (docs/guides/streaming.md).
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { runnerOfCall, runnerPid } from '../support/runner-pid.js';
import { twoRunners } from '../support/two-runners.js';
import { waitUntil } from '../support/wait-until.js';

const CHILD_TEXT = Array.from({ length: 60 }, (_, i) => `part ${i}; `).join('');

t.test('a call re-issued after a SIGKILL mid-stream starts its deltas over with reset', async (t) => {
  const { mesh } = await twoRunners(t, (r) => {
    if (r.agent === 'child') {
      // The first attempt streams for about 3 s (the runner dies in it); the re-issue is quick.
      const first = mesh.model.of('child').length === 1;
      return { final: CHILD_TEXT, chunks: 60, chunkDelayMs: first ? 50 : 1 };
    }
    return turnOf(r) === 0
      ? // Slow enough that the runner's first check of the watch key (cached 1 s) has lapsed.
        { calls: [{ name: '_subagent_child', args: { prompt: 'x' } }], latencyMs: 1500 }
      : { final: `parent got ${r.messages.at(-1)!.content}` };
  });
  const keys = keyLayout(mesh.prefix);
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  const root = started.json.id as string;
  await mesh.client.set(keys.watch(root), '1', 'PX', 120_000);
  const childDeltas = async () =>
    ((await mesh.client.xrange(keys.deltas(root), '-', '+')) as [string, string[]][])
      .map(([, f]) => JSON.parse(f[1]!))
      .filter((e) => e.type === 'delta' && e.invocationId !== root);
  await waitUntil(
    async () => (await childDeltas()).length >= 2,
    30_000,
    () => 'the child streaming deltas',
  );
  const childId = (await childDeltas())[0].invocationId as string;
  const runner = await runnerOfCall(mesh, childId, 't0-model');
  process.kill(runnerPid(runner), 'SIGKILL');
  const before = (await childDeltas()).length;

  const done = await mesh.waitForStatus(root, 'succeeded', 60_000, () => 'the tree to finish elsewhere');
  t.equal(done.output, `parent got ${CHILD_TEXT}`);
  t.equal(mesh.model.of('child').length, 2, 'the child call in doubt was re-issued once');

  const deltas = (await childDeltas()).filter((e) => e.data.callId === 't0-model');
  t.notOk(
    deltas.slice(0, before).some((e) => e.data.reset),
    'the first attempt sent no reset',
  );
  const resets = deltas.filter((e) => e.data.reset);
  t.equal(resets.length, 1, 'the re-issued call said reset once');
  const from = deltas.indexOf(resets[0]);
  t.ok(from >= before, 'after what the killed runner sent');
  t.same(
    deltas.slice(from).map((e) => e.data.seq),
    deltas.slice(from).map((_, i) => i),
    'and numbered its deltas from 0 again',
  );
  t.equal(
    deltas
      .slice(from)
      .map((e) => e.data.content ?? '')
      .join(''),
    CHILD_TEXT,
    'the deltas since the reset add up to the recorded reply',
  );
  const record = JSON.parse((await mesh.client.hget(keys.calls(root, childId), 't0-model'))!);
  t.equal(record.reply.content, CHILD_TEXT);
  const delegation = done.calls.find((c: { kind: string }) => c.kind === 'subagent');
  t.match(resets[0], { rootId: root, depth: 1, parentCallId: delegation.callId, agent: 'child' });
});
