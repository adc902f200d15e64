// A model entry's maxConcurrency caps the calls in flight to it across every runner.
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

t.test('maxConcurrency caps in-flight model calls across runners, and every call still runs', async (t) => {
  const mesh = await startMesh(t, {
    runners: 2,
    modelOptions: ', maxConcurrency: 2',
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
    script: (r) =>
      r.agent === 'child'
        ? { final: 'done', latencyMs: 150 }
        : turnOf(r) === 0
          ? { calls: [1, 2, 3, 4, 5, 6].map((i) => ({ name: '_subagent_child', args: { prompt: `${i}` } })) }
          : { final: 'all done' },
  });
  const res = await mesh.invoke('parent', { prompt: 'go' }, 'wait=60');
  t.equal(res.json.status, 'succeeded');
  t.equal(mesh.model.of('child').length, 6);
  const edges = mesh.model.requests.flatMap((r) => [
    { at: r.arrivedAt, d: 1 },
    { at: r.doneAt!, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let inFlight = 0;
  let peak = 0;
  for (const e of edges) {
    inFlight += e.d;
    peak = Math.max(peak, inFlight);
  }
  t.equal(peak, 2, 'never more than two calls in flight, and the cap was reached');
});

t.test(
  'without maxConcurrency a runner has as many model calls in flight as it has slots, past 256',
  async (t) => {
    const slots = 300;
    // Every call is held until the last one has arrived, so all are in flight at once when nothing
    // caps them. When something does, the last never comes: the calls are answered 6 s after the
    // first arrived (time enough for every call to leave the runner), and the peak shows the cap.
    let allIn!: () => void;
    const arrived = new Promise<void>((r) => (allIn = r));
    let cap: NodeJS.Timeout | undefined;
    t.teardown(() => clearTimeout(cap));
    const mesh = await startMesh(t, {
      concurrency: slots,
      agentsYaml: '  single: {instructions: "@agent single"}\n',
      script: (r) => {
        cap ??= setTimeout(allIn, 6000);
        if (r.n >= slots) allIn();
        return { final: 'done', until: arrived };
      },
    });
    const started = await Promise.all(
      Array.from({ length: slots }, (_, i) => mesh.invoke('single', { prompt: `${i}` }, 'wait=0')),
    );
    t.ok(
      started.every((r) => r.status === 202),
      'every invocation is accepted',
    );
    for (const r of started) await mesh.waitForStatus(r.json.id, 'succeeded', 60_000);
    const edges = mesh.model.requests.flatMap((r) => [
      { at: r.arrivedAt, d: 1 },
      { at: r.doneAt!, d: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.d - b.d);
    let inFlight = 0;
    let peak = 0;
    for (const e of edges) {
      inFlight += e.d;
      peak = Math.max(peak, inFlight);
    }
    t.equal(peak, slots, 'one call in flight per slot: no connection pool caps the runner below its slots');
  },
);
