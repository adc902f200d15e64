// Runner affinity (services/agent-runner/src/queue/fast-path/affinity.ts; docs/architecture/queue-fast-path.md,
// "Affinity"): one runner takes a queue's jobs while it has slots to spare, the others stand by,
// and it hands its queues on at once when its slots run short or it leaves. Without it, Redis hands
// each job to the runner that has waited longest, and a sequential client's runs alternate.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { pinQueueFastPath, startMesh, type TestMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

// Affinity is a part of the queue fast path, in either run mode.
pinQueueFastPath();

const agentsYaml = `
  solo: {instructions: "@agent solo"}
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
  slow: {instructions: "@agent slow"}
`;

/** When set, the next model call holds the one event loop of the in-process mesh this long. */
let stallOnceMs = 0;

const script = (r: { agent: string; messages: unknown[] }) => {
  if (stallOnceMs > 0) {
    const until = Date.now() + stallOnceMs;
    stallOnceMs = 0;
    while (Date.now() < until); // every runner, the gateway and Redis's replies wait behind it
  }
  return r.agent === 'parent' && turnOf(r as never) === 0
    ? { calls: [{ name: '_subagent_child', args: { prompt: 'part' } }] }
    : { final: `${r.agent} answer`, latencyMs: r.agent === 'slow' ? 3000 : 0 };
};

/** The runner of each call of invocation `id` and of its children's. */
async function runnersOf(mesh: TestMesh, id: string): Promise<string[]> {
  const view = (await mesh.get(`/invocations/${id}`)).json;
  const own: string[] = view.calls.map((c: { runner: string }) => c.runner);
  const children = await Promise.all(
    view.calls
      .filter((c: { childId?: string }) => c.childId)
      .map((c: { childId: string }) => runnersOf(mesh, c.childId)),
  );
  return [...own, ...children.flat()];
}

t.test("one runner takes every queue's jobs while it has slots to spare; the other stands by", async (t) => {
  const mesh = await startMesh(t, { runners: 2, agentsYaml, script });
  const calls = new Map<string, number>();
  for (let i = 0; i < 12; i++) {
    const res = await mesh.invoke(i % 2 ? 'solo' : 'parent', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded');
    for (const runner of await runnersOf(mesh, res.json.id)) calls.set(runner, (calls.get(runner) ?? 0) + 1);
  }
  // Without affinity the runs alternate, half the calls on each runner. A call that waited 50 ms
  // for the holder (a loaded machine) may be helped by the other: all but a few stay on one.
  const [holder, most] = [...calls].sort((a, b) => b[1] - a[1])[0]!;
  const total = [...calls.values()].reduce((a, b) => a + b, 0);
  t.ok(
    most >= total - 2,
    `the runs' calls, parents' and children's alike, on one runner (${JSON.stringify(Object.fromEntries(calls))})`,
  );
  const keys = keyLayout(mesh.prefix);
  for (const agent of ['solo', 'parent', 'child'])
    t.equal(await mesh.client.get(keys.agentTaker(agent)), holder, `it holds ${agent}'s lease`);
  t.ok((await mesh.client.pttl(keys.agentTaker('solo'))) > 0, 'a lease that lapses unless renewed');
});

t.test('a runner whose slots run short hands its queues on to the one standing by, at once', async (t) => {
  const mesh = await startMesh(t, { runners: 2, concurrency: 1, agentsYaml, script });
  const keys = keyLayout(mesh.prefix);
  const first = await mesh.invoke('slow', { prompt: '1' }, 'wait=0');
  const holder = await waitUntil(
    async () => (await runnersOf(mesh, first.json.id))[0],
    10_000,
    () => "the first call's runner",
  );
  const other = mesh.runners.find((r) => r.id !== holder)!;
  // Its one slot taken, the runner gives its leases up and wakes the other, which claims them long
  // before its standby period (5 s) would have it look, and takes the next run.
  await waitUntil(
    async () => (await mesh.client.get(keys.agentTaker('slow'))) === other.id,
    2000,
    () => 'the lease to pass to the runner standing by',
  );
  const second = await mesh.invoke('slow', { prompt: '2' }, 'wait=0');
  for (const { json } of [first, second]) await mesh.waitForStatus(json.id, 'succeeded', 20_000);
  const [callA, callB] = mesh.model.of('slow');
  t.ok(callB!.arrivedAt < callA!.doneAt!, 'the second call started while the first was in flight');
  t.strictSame(await runnersOf(mesh, second.json.id), [other.id], 'on the runner that stood by');
});

t.test('a holder that falls behind wakes the runner standing by to take some of what waits', async (t) => {
  // Slots to spare (256), so that only the jobs' waits can wake the other runner.
  const mesh = await startMesh(t, { runners: 2, concurrency: 256, agentsYaml, script });
  const warm = await mesh.invoke('solo', { prompt: 'warm up' });
  const [holder] = await runnersOf(mesh, warm.json.id);
  // Sixty runs at once on one event loop (the runners are in-process): the holder takes them one
  // after another, and the first model call holds that loop 80 ms, so the jobs added by then wait
  // past 50 ms for the holder however quick the machine.
  stallOnceMs = 80;
  const runs = await Promise.all(Array.from({ length: 60 }, () => mesh.invoke('solo', { prompt: 'go' })));
  t.ok(
    runs.every((r) => r.json.status === 'succeeded'),
    'every run succeeded',
  );
  const by = new Map<string, number>();
  for (const r of runs)
    for (const runner of await runnersOf(mesh, r.json.id)) by.set(runner, (by.get(runner) ?? 0) + 1);
  t.equal(by.size, 2, `both runners took runs (${JSON.stringify(Object.fromEntries(by))})`);
  t.equal(
    await mesh.client.get(keyLayout(mesh.prefix).agentTaker('solo')),
    holder,
    'the holder kept its lease: the other took what waited and stood by again',
  );
});

t.test('a runner that leaves hands its queues on to the one standing by, at once', async (t) => {
  const mesh = await startMesh(t, { runners: 2, agentsYaml, script });
  const keys = keyLayout(mesh.prefix);
  const before = await mesh.invoke('solo', { prompt: 'go' });
  const [holder] = await runnersOf(mesh, before.json.id);
  const leaving = mesh.runners.find((r) => r.id === holder)!;
  const staying = mesh.runners.find((r) => r.id !== holder)!;
  await leaving.close();
  await waitUntil(
    async () => (await mesh.client.get(keys.agentTaker('solo'))) === staying.id,
    2000,
    () => 'the runner standing by to hold the lease (it lapses in 6 s by itself)',
  );
  const after = await mesh.invoke('solo', { prompt: 'go' });
  t.equal(after.json.status, 'succeeded');
  t.strictSame(await runnersOf(mesh, after.json.id), [staying.id], 'the next run on the runner that stayed');
});
