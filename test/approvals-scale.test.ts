// Approvals at scale (docs/guides/approvals-and-budgets.md, docs/architecture/durability-and-fencing.md): a thousand invocations parked on approvals hold no worker
// slot. In its own file, with its own timeout: creating and parking them all on a loaded machine
// may take minutes, more than the per-file budget the other approval tests share.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

// Longer than the wait below, so a slow run fails with the waitUntil's message, not a kill.
const PARK_ALL_MS = 300_000;
t.setTimeout(PARK_ALL_MS + 120_000);

const AGENTS = `
  boss: {instructions: "@agent boss", tools: [charge]}
  plain: {instructions: "@agent plain"}
`;

t.test('1,000 invocations waiting on approvals hold no runner slot', async (t) => {
  const m = await startMesh(t, {
    agentsYaml: AGENTS,
    concurrency: 1,
    tools: [
      {
        name: 'charge',
        description: 'Charges money.',
        input: { type: 'object', properties: { amount: { type: 'number' } } },
        needsApproval: true,
        run: async () => 'charged',
      },
    ],
    script: (r) =>
      r.agent === 'boss' && turnOf(r) === 0
        ? { calls: [{ name: 'charge', args: { amount: 5 } }] }
        : { final: r.agent === 'plain' ? 'plain answer' : 'done' },
  });
  const n = 1000;
  const statuses = new Set<number>();
  for (let i = 0; i < n; i++) statuses.add((await m.invoke('boss', { prompt: `go ${i}` }, 'wait=0')).status);
  t.same([...statuses], [202], 'all queued');
  const index = keyLayout(m.prefix).approvalIndex(undefined);
  await waitUntil(
    async () => (await m.client.zcard(index)) === n,
    PARK_ALL_MS,
    () => `${n} approvals pending`,
  );
  const plain = await m.invoke('plain', { prompt: 'hi' }, 'wait=30');
  t.equal(plain.status, 200, 'a runner of concurrency 1 still serves new work');
  t.equal(plain.json.output, 'plain answer');
  const page = (await m.get('/approvals?limit=100')).json;
  t.equal(page.items.length, 100);
  t.ok(page.nextCursor, 'more pages');
  const next = (await m.get(`/approvals?limit=100&cursor=${page.nextCursor}`)).json;
  t.equal(next.items.length, 100);
  t.notOk(
    next.items.some((x: any) => page.items.some((y: any) => y.invocationId === x.invocationId)),
    'pages do not overlap',
  );
});
