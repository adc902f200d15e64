// A pending approval survives runner and gateway restarts (docs/guides/approvals-and-budgets.md): a grandchild parks on an
// approval, the runner process that parked it is SIGKILLed, and a SECOND gateway process decides;
// a fresh runner resumes the grandchild, the tool runs once and the whole tree succeeds.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { freePort } from '../support/redis-server.js';
import { runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

const AGENTS = `
  planner: {instructions: "@agent planner", subagents: [mid]}
  mid: {instructions: "@agent mid", subagents: [leaf]}
  leaf: {instructions: "@agent leaf", tools: [charge]}
`;

const SCRIPT: FakeScript = (r) => {
  const next = { planner: '_subagent_mid', mid: '_subagent_leaf', leaf: 'charge' }[r.agent] ?? 'charge';
  return turnOf(r) === 0
    ? { calls: [{ name: next, args: next === 'charge' ? { amount: 7 } : { prompt: 'go' } }] }
    : {
        final: toolMessagesOf(r)
          .map((m) => m.content)
          .join(' | '),
      };
};

t.test('an approval decided through another gateway after its runner was killed', async (t) => {
  const runs = { charge: 0 };
  const mesh = await startMesh(t, {
    runners: 0,
    agentsYaml: AGENTS,
    script: SCRIPT,
    tools: [
      {
        name: 'charge',
        description: 'Charges money.',
        input: { type: 'object', properties: { amount: { type: 'number' } } },
        needsApproval: true,
        run: async (args: unknown) => {
          runs.charge++;
          return `charged ${(args as { amount: number }).amount}`;
        },
      },
    ],
  });
  const live = async (n: number) =>
    (await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('leaf'), Date.now(), '+inf')) >= n;
  const first = startService(t, 'runner', mesh.env);
  await waitUntil(
    () => live(1),
    60_000,
    () => first.output(),
  );

  const id = (await mesh.invoke('planner', { prompt: 'go' }, 'wait=0')).json.id;
  const leafId = await waitUntil(
    async () => {
      const midId = (await mesh.get(`/invocations/${id}`)).json.calls.find((c: any) => c.childId)?.childId;
      const mid = midId && (await mesh.get(`/invocations/${midId}`)).json;
      const leaf = mid?.calls.find((c: any) => c.childId)?.childId;
      return leaf && (await mesh.get(`/invocations/${leaf}`)).json.status === 'waiting' ? leaf : undefined;
    },
    60_000,
    () => `the grandchild to wait\n${first.output()}`,
  );
  const leaf = (await mesh.get(`/invocations/${leafId}`)).json;
  t.match(leaf.pendingApprovals, [{ callId: 't0-call0', name: 'charge', args: { amount: 7 } }]);
  const asking = leaf.calls.find((c: any) => c.callId === 't0-call0');
  t.equal(asking.status, 'awaiting_approval');

  // The runner that parked it dies; a new one and a second gateway (its own process) come up.
  process.kill(runnerPid(asking.runner), 'SIGKILL');
  await first.exited;
  const second = startService(t, 'runner', mesh.env);
  const port = await freePort();
  const gateway = startService(t, 'gateway', { ...mesh.env, GATEWAY_PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
    60_000,
    () => `the second gateway to be ready\n${gateway.output()}\n${second.output()}`,
  );
  const decidedAt = Date.now();
  const res = await fetch(`${base}/invocations/${leafId}/approvals/t0-call0`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approved: true }),
  });
  t.equal(res.status, 200);
  t.equal(((await res.json()) as { id: string }).id, leafId);

  const done = await mesh.waitForStatus(id, 'succeeded', 60_000, () => second.output());
  t.equal(done.output, 'charged 7');
  t.equal(runs.charge, 1, 'the approved tool ran once');
  t.same(
    mesh.model.of('leaf').map(turnOf),
    [0, 1],
    'the grandchild asked its model once per turn: nothing was redone',
  );
  t.comment(`decision to resumed model call: ${mesh.model.of('leaf')[1]!.arrivedAt - decidedAt} ms`);
});
