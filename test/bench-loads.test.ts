// The latency-0 load and round trips of `npm run bench` (docs/reference/benchmarks.md) and their floors, run small against the
// services as processes (compiled, as the bench runs them: the full tier builds first), so a change
// to what it reads fails here rather than in the next full bench run. What it measures is never
// asserted (speed belongs to the bench); that each side ran and that each CPU figure counted its
// own processes is.
import t from 'tap';
import { roundTripFigures } from '../bench/figures/round-trips.js';
import { throughputFigures } from '../bench/figures/throughput.js';
import { benchOptions } from '../bench/support/bench-options.js';
import { makeBenchContext } from '../bench/support/make-bench-context.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
import { startMeshProcesses } from '../bench/support/start-mesh-processes.js';
import { stopOnExit } from '../bench/support/stop-on-exit.js';

const opts = benchOptions({ BENCH_QUICK: '1', BENCH_REPS: '1', BENCH_WARMUP: '5', BENCH_SECONDS: '1' });
t.teardown(() => stopOnExit.run());
const model = await startBenchModel(opts.depth);
const mesh = await startMeshProcesses(model.url, opts.depth, 2);
const ctx = makeBenchContext(opts, model, mesh, () => undefined);

t.test(
  'the latency-0 load: each client, the SDK and the bare floor through each client in turns',
  async (t) => {
    const figures = await throughputFigures(ctx, 0, 2, undefined, { floor: true });
    t.strictSame(
      figures.map((f) => `${f.figure} (${f.client})`),
      [
        ...['undici', 'fetch'].flatMap((client) =>
          [
            'floor_bare_throughput_latency0_clients2',
            'floor_bare_cpu_per_run_latency0',
            'floor_bare_cpu_per_run_all_latency0',
          ].map((name) => `${name} (${client})`),
        ),
        ...['undici', 'fetch'].flatMap((client) =>
          [
            'throughput_latency0_clients2',
            'cpu_per_run_latency0',
            'cpu_per_run_all_latency0',
            'latency_p99_latency0_clients2',
          ].map((name) => `${name} (${client})`),
        ),
      ],
    );
    for (const f of figures) {
      t.ok(f.mesh.p50 > 0 && Number.isFinite(f.mesh.p50), `${f.figure} (${f.client}): the mesh's side ran`);
      t.ok(f.sdk!.p50 > 0, `${f.figure} (${f.client}): the SDK's side ran`);
    }
    const [, bareCpu, bareAll] = figures;
    t.equal(bareCpu!.runners, 2, 'the floor runs as many bare runners as the mesh ships');
    const parts = bareCpu!.bareByPart as Record<string, number>;
    t.strictSame(Object.keys(parts), ['redis', 'gateway', 'runners'], 'its CPU by part');
    t.ok(parts.runners! > 0 && parts.gateway! > 0, 'the bare runners and gateway each counted');
    t.ok(
      bareAll!.mesh.p50 > bareCpu!.mesh.p50,
      "every process either side needs counts the caller's and the model's too",
    );
  },
);

t.test('without the floor, no bare pipeline: the load alone', async (t) => {
  const figures = await throughputFigures(ctx, 0, 1);
  t.notOk(
    figures.some((f) => f.figure.startsWith('floor_')),
    'no floor figure',
  );
  t.equal(figures.length, 8, 'four figures for each client');
});

t.test('the round trips and their floors: each client, one bare runner and two', async (t) => {
  // Two runs a series: what is checked is that every series ran, and fourteen take their turns.
  const figures = await roundTripFigures(
    makeBenchContext({ ...opts, runs: 2 }, model, mesh, () => undefined),
  );
  const floors = ['undici', 'fetch'].flatMap((client) =>
    ['floor_bare_round_trip_p50', 'floor_bare_delegation_overhead_p50'].map((name) => `${name} (${client})`),
  );
  t.strictSame(
    figures.map((f) => `${f.figure} (${f.client})`),
    [
      ...floors,
      ...floors,
      ...['undici', 'fetch'].flatMap((client) =>
        ['single_round_trip_p50', 'delegation_overhead_p50'].map((name) => `${name} (${client})`),
      ),
    ],
  );
  t.strictSame(
    figures.filter((f) => f.figure.startsWith('floor_')).map((f) => f.runners),
    [1, 1, 1, 1, 2, 2, 2, 2],
    'each floor with one bare runner, then with two',
  );
  for (const f of figures.filter((f) => f.figure.endsWith('round_trip_p50')))
    t.ok(
      f.mesh.p50 > 0 && f.sdk!.p50 > 0,
      `${f.figure} (${f.client}, ${f.runners ?? 'mesh'}): both sides ran`,
    );
});
