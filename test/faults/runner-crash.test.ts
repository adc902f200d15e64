// A runner SIGKILLed mid-invocation loses nothing recorded: a second runner process takes the job
// over (once Redis sees the dead one's connections close, gone-runners.ts), replays the records and
// re-issues only the call in doubt. Asserted by the exact requests the fake model received.
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import type { TestMesh } from '../support/mesh.js';
import { parentAndChild } from '../support/parent-and-child.js';
import { runnerOfCall, runnerPid } from '../support/runner-pid.js';
import { twoRunners } from '../support/two-runners.js';
import { waitUntil } from '../support/wait-until.js';

/** Waits for the call's `started` record and SIGKILLs the runner process that wrote it. */
async function killRunnerOf(mesh: TestMesh, id: string, callId: string) {
  const runner = await runnerOfCall(mesh, id, callId);
  const killedAt = Date.now();
  process.kill(runnerPid(runner), 'SIGKILL');
  return { killedAt, runner };
}

t.test(
  "a runner killed during the parent's model call: the call is re-issued once, nothing else",
  async (t) => {
    const { mesh } = await twoRunners(t, parentAndChild({ parent: 1500 }));
    const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
    await waitUntil(
      async () => mesh.model.of('parent').length === 1,
      20_000,
      () => 'the parent model call',
    );
    const { killedAt } = await killRunnerOf(mesh, started.json.id, 't0-model');
    const done = await mesh.waitForStatus(
      started.json.id,
      'succeeded',
      60_000,
      () => 'the invocation to finish elsewhere',
    );
    t.equal(done.output, 'parent got child answer');
    const turns = mesh.model.of('parent').map(turnOf);
    t.same(turns, [0, 0, 1], 'the parent model call in doubt was re-issued once; turn 1 ran once');
    t.equal(mesh.model.of('child').length, 1, 'the child ran once');
    const resumedAt = mesh.model.of('parent')[1]!.arrivedAt;
    t.comment(`recovery after SIGKILL: ${resumedAt - killedAt} ms until the call in doubt was re-issued`);
    t.ok(resumedAt > killedAt);
  },
);

t.test("a runner killed during a child's model call: only that call is re-issued", async (t) => {
  const { mesh } = await twoRunners(t, parentAndChild({ child: 1500 }));
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => mesh.model.of('child').length === 1,
    20_000,
    () => 'the child model call',
  );
  const parentView = (await mesh.get(`/invocations/${started.json.id}`)).json;
  const childId = parentView.calls.find((c: any) => c.kind === 'subagent').childId;
  const { killedAt } = await killRunnerOf(mesh, childId, 't0-model');
  const done = await mesh.waitForStatus(
    started.json.id,
    'succeeded',
    60_000,
    () => 'the invocation to finish elsewhere',
  );
  t.equal(done.output, 'parent got child answer');
  t.same(mesh.model.of('parent').map(turnOf), [0, 1], 'the parent model calls ran once each');
  t.equal(mesh.model.of('child').length, 2, 'the child model call in doubt was re-issued once');
  t.comment(`recovery after SIGKILL: ${mesh.model.of('child')[1]!.arrivedAt - killedAt} ms`);
});
