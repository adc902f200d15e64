// Cancelling a tree on a three-master Redis Cluster (docs/architecture/durability-and-fencing.md, docs/guides/deploying.md): the subtree is flagged in one
// Lua step on the tree's slot, the broadcast reaches the runner, parked parents end `cancelled`.
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh } from '../support/mesh.js';
import { waitUntil } from '../support/wait-until.js';

t.test('cancelling a root cancels its children, and the model gets no request after', async (t) => {
  const mesh = await startMesh(t, {
    cluster: true,
    agentsYaml: `
  root: {instructions: "@agent root", subagents: [leaf]}
  leaf: {instructions: "@agent leaf"}
`,
    script: (r) => {
      if (r.agent === 'leaf') return { final: 'leaf', latencyMs: 20_000 };
      if (turnOf(r) > 0) return { final: 'root done' };
      return { calls: [1, 2].map((i) => ({ name: '_subagent_leaf', args: { prompt: `leaf ${i}` } })) };
    },
  });
  const started = await mesh.invoke('root', { prompt: 'go' }, 'wait=0');
  t.equal(started.status, 202);
  await waitUntil(
    async () => mesh.model.of('leaf').length === 2,
    30_000,
    () => 'two leaf calls in flight',
  );
  const requestsAtCancel = mesh.model.requests.length;
  const res = await mesh.request('DELETE', `/invocations/${started.json.id}`);
  t.equal(res.status, 202);
  const root = await mesh.waitForStatus(started.json.id, 'cancelled', 30_000);
  const children = root.calls.filter((c: { childId?: string }) => c.childId);
  t.equal(children.length, 2, 'both delegations were submitted');
  for (const c of children) {
    t.equal(
      (await mesh.waitForStatus(c.childId, 'cancelled', 30_000)).status,
      'cancelled',
      `${c.childId} cancelled`,
    );
  }
  t.equal(mesh.model.requests.length, requestsAtCancel, 'no model request after the cancel');
});
