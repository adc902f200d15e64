// The streaming figures of `npm run bench` (docs/reference/benchmarks.md), run small against the services as
// processes (compiled, as the bench runs them: the full tier builds first), so a change to what
// they read — the invoke stream's events, the SDK's stream events, the `stream: false` model entry,
// the delta keys — fails here rather than in the next full bench run. What they measure is never
// asserted (speed belongs to the bench); that every sample came is: a first delta on each side of
// every run, the model's own time of each long reply, and the long reply's delta writes only while
// watched.
import t from 'tap';
import { deltaCommandFigures } from '../bench/figures/delta-commands.js';
import { firstDeltaFigures } from '../bench/figures/first-delta.js';
import { longReplyFigures } from '../bench/figures/long-reply.js';
import { unwatchedRoundTripFigures } from '../bench/figures/unwatched-round-trips.js';
import { benchOptions } from '../bench/support/bench-options.js';
import type { Figure } from '../bench/support/figure.js';
import { makeBenchContext } from '../bench/support/make-bench-context.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
import { startMeshProcesses } from '../bench/support/start-mesh-processes.js';
import { stopOnExit } from '../bench/support/stop-on-exit.js';

const opts = benchOptions({ BENCH_QUICK: '1', BENCH_REPS: '1', BENCH_RUNS: '2', BENCH_WARMUP: '1' });
t.teardown(() => stopOnExit.run());
const model = await startBenchModel(opts.depth);
const mesh = await startMeshProcesses(model.url, opts.depth, 1);
const ctx = makeBenchContext(opts, model, mesh, () => undefined);

/** Each figure as `name (context)`, and whether all its numbers are positive and finite. */
const rows = (figures: Figure[], context: string[]) =>
  figures.map((f) => `${f.figure} (${context.map((k) => `${k}=${f[k]}`).join(', ')})`);
const measured = (figures: Figure[]) =>
  figures
    .flatMap((f) => [f.mesh, ...(f.sdk ? [f.sdk] : [])])
    .every((s) => s.p50 > 0 && Number.isFinite(s.p50));

t.test('time to the first delta: both clients and the SDK, each cadence, median and p99', async (t) => {
  const figures = await firstDeltaFigures(ctx);
  const each = (chunkMs: number) =>
    ['undici', 'fetch'].flatMap((client) =>
      ['p50', 'p99'].map((q) => `first_delta_${q} (chunkMs=${chunkMs}, client=${client})`),
    );
  t.strictSame(rows(figures, ['chunkMs', 'client']), [...each(1), ...each(0)]);
  t.ok(measured(figures), 'every run of either side got a text delta');
});

t.test('the long reply: end to end against the model, and its delta commands', async (t) => {
  const times = await longReplyFigures(ctx);
  t.strictSame(rows(times, ['client']), [
    'long_reply_end_to_end (client=undici)',
    'long_reply_end_to_end (client=fetch)',
  ]);
  t.ok(measured(times), 'every run ended');
  t.ok(
    times.every((f) => (f.model as { p50: number }).p50 > 0),
    "the fake model noted each reply's own time",
  );
  const [commands, writes] = await deltaCommandFigures(ctx);
  t.strictSame(
    [commands?.figure, writes?.figure],
    ['redis_commands_long_reply_deltas', 'redis_writes_long_reply_deltas'],
  );
  const watched = commands?.watchedByCommand as Record<string, number>;
  const unwatched = commands?.unwatchedByCommand as Record<string, number>;
  t.ok(watched.xadd! > 0, 'the watched run wrote its deltas');
  t.equal(writes?.mesh.p50, watched.xadd! + (watched.pexpire ?? 0), 'its writes are its XADDs and PEXPIREs');
  t.ok(watched.xread! > 0, 'and the gateway read them');
  t.equal(unwatched.xadd, undefined, 'the unwatched run wrote none');
});

t.test('unwatched round trips: streamed against `stream: false`, both agents and clients', async (t) => {
  const figures = await unwatchedRoundTripFigures(ctx);
  const each = (agent: string) =>
    ['undici', 'fetch'].flatMap((client) =>
      ['stream', 'json'].map(
        (reply) => `unwatched_${agent}_round_trip_p50 (modelReply=${reply}, client=${client})`,
      ),
    );
  t.strictSame(rows(figures, ['modelReply', 'client']), [...each('single'), ...each('parent')]);
  await ctx.model.startTrace();
  for (const agent of ['single', 'single_json', 'parent_json']) await ctx.invoke(agent);
  t.strictSame(
    (await ctx.model.stopTrace()).map((a) => `${a.agent} ${a.stream}`),
    ['single true', 'single_json false', 'parent_json false', 'child_json false', 'parent_json false'],
    'the JSON rows come from a model entry that does not stream',
  );
  t.ok(measured(figures), 'every run answered');
  t.ok(
    figures.every((f) => (f.modelReply === 'stream') === (typeof f.ratio === 'number')),
    'each streamed row has its ratio to the JSON row',
  );
});
