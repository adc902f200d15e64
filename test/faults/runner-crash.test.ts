// A runner SIGKILLed mid-invocation loses nothing recorded: a second runner process takes the job
// over once the lock lapses (RUNNER_LOCK_MS, 4 s by default), replays the records and re-issues
// only the call in doubt. Asserted by the exact requests the fake model received.
import { keyLayout } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { type FakeScript, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { PARENT_AND_CHILD, parentAndChild } from '../support/parent-and-child.js';
import { runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

async function twoRunners(t: Test, script: FakeScript) {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: PARENT_AND_CHILD, script });
  const runners = [0, 1].map(() => startService(t, 'runner', mesh.env));
  await waitUntil(
    async () =>
      (await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('child'), Date.now(), '+inf')) === 2,
    60_000,
    () => runners.map((r) => r.output()).join('\n'),
  );
  return mesh;
}

/** Waits for the call's `started` record and SIGKILLs the runner process that wrote it. */
async function killRunnerOf(mesh: Awaited<ReturnType<typeof twoRunners>>, id: string, callId: string) {
  const call = await waitUntil(
    async () =>
      (await mesh.get(`/invocations/${id}`)).json?.calls?.find((c: any) => c.callId === callId && c.runner),
    20_000,
    () => `${callId} of ${id} started`,
  );
  const killedAt = Date.now();
  process.kill(runnerPid(call.runner), 'SIGKILL');
  return { killedAt, runner: call.runner as string };
}

t.test(
  "a runner killed during the parent's model call: the call is re-issued once, nothing else",
  async (t) => {
    const mesh = await twoRunners(t, parentAndChild({ parent: 1500 }));
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
  const mesh = await twoRunners(t, parentAndChild({ child: 1500 }));
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
