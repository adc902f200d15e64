// Cancellation reaches the whole tree across processes: the gateway flags the subtree in Redis and
// broadcasts it; the runner process aborts the model calls in flight; parked parents resume and end
// `cancelled`; the model gets no request after the cancel.
import { keyLayout } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { waitUntil } from '../support/wait-until.js';

const tree = `
  root: {instructions: "@agent root", subagents: [mid]}
  mid: {instructions: "@agent mid", subagents: [leaf]}
  leaf: {instructions: "@agent leaf"}
`;

const script = (r: { agent: string; messages: unknown[] }) => {
  if (r.agent === 'leaf') return { final: 'leaf', latencyMs: 20_000 };
  if (turnOf(r as never) > 0) return { final: `${r.agent} done` };
  const next = r.agent === 'root' ? 'mid' : 'leaf';
  return { calls: [1, 2].map((i) => ({ name: `_subagent_${next}`, args: { prompt: `${next} ${i}` } })) };
};

async function startTree(t: Test) {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: tree, script });
  const runner = startService(t, 'runner', mesh.env);
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => runner.output(),
  );
  return mesh;
}

t.test(
  'cancelling a three-level tree while its leaves are in a slow model call cancels every node',
  async (t) => {
    const mesh = await startTree(t);
    const started = await mesh.invoke('root', { prompt: 'go' }, 'wait=0');
    t.equal(started.status, 202);
    await waitUntil(
      async () => mesh.model.of('leaf').length === 4,
      30_000,
      () => 'four leaf calls',
    );
    const cancelledAt = Date.now();
    const res = await mesh.gateway.app.inject({ method: 'DELETE', url: `/invocations/${started.json.id}` });
    t.equal(res.statusCode, 202);
    const root = await waitUntil(
      async () => {
        const v = await mesh.get(`/invocations/${started.json.id}`);
        return v.json.status === 'cancelled' ? v.json : undefined;
      },
      30_000,
      () => 'root cancelled',
    );
    const nodes: any[] = [];
    const walk = async (view: any) => {
      nodes.push(view);
      for (const c of view.calls.filter((x: any) => x.childId))
        await walk(await (await mesh.get(`/invocations/${c.childId}`)).json);
    };
    await walk(root);
    await waitUntil(
      async () => nodes.length === 7,
      5000,
      () => `nodes: ${nodes.length}`,
    );
    t.same(
      nodes.map((n) => n.status),
      Array(7).fill('cancelled'),
      'root, two mids and four leaves all end cancelled',
    );
    t.same(
      nodes.flatMap((n) => n.calls.map((c: any) => c.status)).filter((s) => s === 'failed'),
      [],
      'no terminal failure is recorded for a cancelled call',
    );
    t.equal(
      mesh.model.requests.filter((r) => r.arrivedAt > cancelledAt).length,
      0,
      'the model gets no request after the cancel',
    );
    t.ok(
      mesh.model.of('leaf').every((r) => r.aborted),
      'the leaves’ slow model calls were aborted, not awaited',
    );
  },
);

t.test(
  'cancelling one child is a failed delegation, reason cancelled, for its parent, which goes on',
  async (t) => {
    const mesh = await startTree(t);
    const started = await mesh.invoke('root', { prompt: 'go' }, 'wait=0');
    await waitUntil(
      async () => mesh.model.of('leaf').length === 4,
      30_000,
      () => 'four leaf calls',
    );
    const view = (await mesh.get(`/invocations/${started.json.id}`)).json;
    const mid = view.calls.find((c: any) => c.kind === 'subagent').childId;
    const res = await mesh.gateway.app.inject({ method: 'DELETE', url: `/invocations/${mid}` });
    t.equal(res.statusCode, 202);
    await waitUntil(
      async () => (await mesh.get(`/invocations/${mid}`)).json.status === 'cancelled',
      30_000,
      () => 'mid cancelled',
    );
    const rootView = (await mesh.get(`/invocations/${started.json.id}`)).json;
    t.not(rootView.status, 'cancelled', 'the ancestor is not cancelled');
    const record = rootView.calls.find((c: any) => c.childId === mid);
    t.equal(record.status, 'cancelled');
    const again = await mesh.gateway.app.inject({ method: 'DELETE', url: `/invocations/${mid}` });
    t.equal(again.statusCode, 200, 'cancelling a terminal invocation changes nothing');
    t.equal(JSON.parse(again.body).status, 'cancelled');
    await mesh.gateway.app.inject({ method: 'DELETE', url: `/invocations/${started.json.id}` });
  },
);

t.test('cancelling removes children still queued and finishes them cancelled', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: tree, script });
  // No runner hosts `leaf`: its jobs stay queued until the cancel removes them.
  const runner = startService(t, 'runner', { ...mesh.env, RUNNER_AGENTS: 'root,mid' });
  await waitUntil(
    async () => (await mesh.client.zcard(keyLayout(mesh.prefix).agentRunners('mid'))) === 1,
    60_000,
    () => runner.output(),
  );
  const started = await mesh.invoke('root', { prompt: 'go' }, 'wait=0');
  const leafIds = await waitUntil(
    async () => {
      const root = (await mesh.get(`/invocations/${started.json.id}`)).json;
      const mids = await Promise.all(
        root.calls.filter((c: any) => c.childId).map((c: any) => mesh.get(`/invocations/${c.childId}`)),
      );
      const leaves = mids.flatMap((m) =>
        m.json.calls.filter((c: any) => c.childId).map((c: any) => c.childId),
      );
      return leaves.length === 4 ? leaves : undefined;
    },
    30_000,
    () => 'four queued leaves',
  );
  const res = await mesh.gateway.app.inject({ method: 'DELETE', url: `/invocations/${started.json.id}` });
  t.equal(res.statusCode, 202);
  await waitUntil(
    async () => (await mesh.get(`/invocations/${started.json.id}`)).json.status === 'cancelled',
    30_000,
    () => 'root cancelled',
  );
  for (const id of leafIds) {
    t.equal(
      (await mesh.get(`/invocations/${id}`)).json.status,
      'cancelled',
      `leaf ${id.slice(-4)} cancelled`,
    );
  }
  t.equal(mesh.model.of('leaf').length, 0, 'no leaf ever ran');
});
