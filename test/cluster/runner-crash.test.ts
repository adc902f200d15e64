// A runner crash on a three-master Redis Cluster (docs/architecture/durability-and-fencing.md, docs/guides/deploying.md): runner processes configured by
// REDIS_CLUSTER_NODES; the one running a child's model call is SIGKILLed; the other takes the job
// over (BullMQ on the cluster, one hash-tagged prefix), replays the records and re-issues only the
// call in doubt.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { PARENT_AND_CHILD, parentAndChild } from '../support/parent-and-child.js';
import { runnerOfCall, runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

t.test("a runner killed during a child's model call: a second runner finishes the tree", async (t) => {
  const mesh = await startMesh(t, {
    cluster: true,
    runners: 0,
    agentsYaml: PARENT_AND_CHILD,
    script: parentAndChild({ child: 1500 }),
  });
  t.ok(mesh.env.REDIS_CLUSTER_NODES, 'the runner processes get the cluster nodes');
  const runners = [0, 1].map(() => startService(t, 'runner', mesh.env));
  await waitUntil(
    async () =>
      (await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('child'), Date.now(), '+inf')) === 2,
    60_000,
    () => runners.map((r) => r.output()).join('\n'),
  );
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  const childId = await waitUntil(
    async () =>
      (await mesh.get(`/invocations/${started.json.id}`)).json.calls.find(
        (c: { childId?: string }) => c.childId,
      )?.childId as string | undefined,
    20_000,
    () => 'the delegation',
  );
  // The `started` record is written as the child activates, a moment before the request leaves
  // the runner: kill only once the fake model holds the request, so it is truly in doubt.
  await waitUntil(
    async () => mesh.model.of('child').length === 1,
    20_000,
    () => "the child's model request",
  );
  const killed = await runnerOfCall(mesh, childId, 't0-model');
  process.kill(runnerPid(killed), 'SIGKILL');
  const done = await mesh.waitForStatus(started.json.id, 'succeeded', 60_000, () =>
    runners.map((r) => r.output()).join('\n'),
  );
  t.equal(done.output, 'parent got child answer');
  t.same(mesh.model.of('child').map(turnOf), [0, 0], "only the child's call in doubt was re-issued");
  t.same(mesh.model.of('parent').map(turnOf), [0, 1], 'the parent ran each turn once');
  const child = (await mesh.get(`/invocations/${childId}`)).json;
  t.not(
    child.calls.find((c: { callId: string }) => c.callId === 't0-model').runner,
    killed,
    'another runner',
  );
});
