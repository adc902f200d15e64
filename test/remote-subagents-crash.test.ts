// A runner of mesh A SIGKILLed while it watches mesh B's task (docs/guides/a2a-and-remote-agents.md, docs/architecture/durability-and-fencing.md): A's runners are
// processes; B's worker is blocked on a slow model reply. The remote task id was recorded before
// the wait, so the runner that takes the child over watches that task instead of sending the
// message again: A gets the answer and B's agent ran once (one model request, one invocation).
import { keyLayout, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { runnerPid } from './support/runner-pid.js';
import { waitUntil } from './support/wait-until.js';

t.test(
  "a runner killed while it watches the remote task: A gets the answer, B's agent ran once",
  async (t) => {
    const portB = await freePort();
    const meshB = await startMesh(t, {
      script: () => ({ final: 'forty-two', latencyMs: 8000 }),
      agentsYaml: `
  worker:
    description: Thinks slowly.
    instructions: "@agent worker"
`,
    });
    await meshB.gateway.app.listen({ port: portB, host: '127.0.0.1' });
    const meshA = await startMesh(t, {
      runners: 0,
      script: (r) =>
        turnOf(r) === 0
          ? { calls: [{ name: '_subagent_helper', args: { prompt: 'the answer?' } }] }
          : { final: `boss got: ${toolMessagesOf(r)[0]?.content ?? ''}` },
      agentsYaml: `
  boss:
    instructions: "@agent boss"
    subagents: [helper]
  helper:
    description: Thinks slowly, on mesh B.
    remote: {a2a: 'http://127.0.0.1:${portB}/a2a/worker/.well-known/agent-card.json'}
`,
    });
    const keys = keyLayout(meshA.prefix);
    for (let i = 0; i < 2; i++) startService(t, 'runner', meshA.env);
    await waitUntil(
      async () => (await meshA.client.zcount(keys.agentRunners('helper'), Date.now(), '+inf')) === 2,
      60_000,
      () => 'two runners of mesh A',
    );
    const started = await meshA.invoke('boss', { prompt: 'go' }, 'wait=0');
    const id: string = started.json.id;
    const childId = await waitUntil(
      async () => (await meshA.get(`/invocations/${id}`)).json.calls.find((c: any) => c.childId)?.childId,
      30_000,
      () => 'the delegation',
    );
    const record = await waitUntil(
      async () => {
        const raw = await meshA.client.hget(keys.calls(rootOf(id), childId), 't0-remote');
        return raw ? JSON.parse(raw) : undefined;
      },
      30_000,
      () => 'the remote task id to be recorded',
    );
    t.equal(record.status, 'started');
    await waitUntil(
      async () => meshB.model.requests.length === 1,
      30_000,
      () => "B's worker to ask its model",
    );
    t.equal(meshB.model.requests[0]!.doneAt, undefined, 'and has not answered yet');
    process.kill(runnerPid(record.runner), 'SIGKILL');
    const done = await meshA.waitForStatus(
      id,
      'succeeded',
      90_000,
      () => 'the root to finish after the crash',
    );
    t.equal(done.output, 'boss got: forty-two');
    const child = (await meshA.get(`/invocations/${childId}`)).json;
    t.equal(child.status, 'succeeded');
    const recoveries = await meshA.client.hget(keys.invocation(rootOf(id), childId), 'recoveries');
    t.equal(recoveries, '1', 'the child was taken over once, after the crash');
    t.equal(meshB.model.of('worker').length, 1, "B's model was asked once");
    const runs = (await meshB.get('/invocations?agent=worker&limit=50')).json.items;
    t.equal(runs.length, 1, 'B ran one invocation');
    t.equal(runs[0].id, record.providerId, 'the task A recorded');
  },
);
