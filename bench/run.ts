// `npm run bench` (docs/performance.md): the mesh — gateway, runners, tool-host and a private Redis, each its
// own process on loopback, with the shipped defaults — against the OpenAI Agents SDK at its fastest in
// this process, on one fake OpenAI-compatible model in a third process whose CPU counts on both sides.
// Every figure a client takes part in is reported for undici's `request` and Node's global fetch.
// One JSON line per figure on stdout, then a table.
// Sizes: BENCH_QUICK=1 for a smoke run; BENCH_REPS, BENCH_RUNS, BENCH_WARMUP, BENCH_SECONDS,
// BENCH_RUNNERS, BENCH_PARKED, BENCH_RECOVERIES, BENCH_DEPTH, BENCH_ONLY, BENCH_SAVE (bench-options.ts);
// BENCH_QUEUE_FASTPATH=off runs the mesh on stock BullMQ (MESH_QUEUE_FASTPATH=off), for an A/B.
// BENCH_CPU_PROF=<dir> has every service write a V8 CPU profile there (spawn-service.ts).
import os from 'node:os';
import { deltaCommandFigures } from './figures/delta-commands.js';
import { depthChainFigure } from './figures/depth-chain.js';
import { firstDeltaFigures } from './figures/first-delta.js';
import { floorFigures } from './figures/floors.js';
import { idleFigures } from './figures/idle.js';
import { longReplyFigures } from './figures/long-reply.js';
import { parkedParentsFigures } from './figures/parked-parents.js';
import { realisticFigures } from './figures/realistic.js';
import { recoveryFigure } from './figures/recovery.js';
import { redisCommandFigures } from './figures/redis-commands.js';
import { roundTripFigures } from './figures/round-trips.js';
import { scalingFigures } from './figures/scaling.js';
import { siblingOverlapFigure } from './figures/sibling-overlap.js';
import { startupFigures } from './figures/startup.js';
import { throughputFigures } from './figures/throughput.js';
import { unwatchedRoundTripFigures } from './figures/unwatched-round-trips.js';
import { benchOptions } from './support/bench-options.js';
import type { Figure } from './support/figure.js';
import { formatTable } from './support/format-table.js';
import { machineInfo } from './support/machine-info.js';
import { makeBenchContext } from './support/make-bench-context.js';
import { saveResults } from './support/save-results.js';
import { startBenchModel } from './support/start-bench-model.js';
import { startMeshProcesses } from './support/start-mesh-processes.js';
import { stopOnExit } from './support/stop-on-exit.js';
import { warmUp } from './support/warm-up.js';

const opts = benchOptions(process.env);
const note = (text: string) => process.stderr.write(`bench: ${text}\n`);
const figures: Figure[] = [];
const errors: { figure: string; error: string }[] = [];
let failed = false;
try {
  const model = await startBenchModel(opts.depth);
  note(
    `starting the mesh (redis, tool-host, gateway, 2 runners; the shipped defaults, queue fast path ${opts.queueFastPath})`,
  );
  const mesh = await startMeshProcesses(model.url, opts.depth, 2, { queueFastPath: opts.queueFastPath });
  const machine = machineInfo(/redis_version:(\S+)/.exec(await mesh.redis.info('server'))?.[1] ?? '?');
  const ctx = makeBenchContext(opts, model, mesh, note);
  note(`warm-up: ${opts.warmup} runs per side`);
  await warmUp(ctx, opts.warmup, { sdk: true });
  const groups: [string, () => Promise<Figure[]>][] = [
    // First: the mesh as shipped (later groups replace and kill runners), just after the warm-up.
    ['idle', () => idleFigures(ctx)],
    ['floors', () => floorFigures(ctx)],
    ['round-trips', () => roundTripFigures(ctx)],
    ['unwatched', () => unwatchedRoundTripFigures(ctx)],
    ['first-delta', () => firstDeltaFigures(ctx)],
    ['siblings', () => siblingOverlapFigure(ctx)],
    [
      'throughput',
      async () => [
        ...(await throughputFigures(ctx, 0, 10, undefined, { floor: true })),
        ...(await throughputFigures(ctx, 50, 100)),
      ],
    ],
    ['realistic', () => realisticFigures(ctx)],
    ['redis-calls', () => redisCommandFigures(ctx)],
    ['long-reply', async () => [...(await longReplyFigures(ctx)), ...(await deltaCommandFigures(ctx))]],
    ['scaling', () => scalingFigures(ctx)],
    ['chain', () => depthChainFigure(ctx)],
    ['recovery', () => recoveryFigure(ctx)],
    ['parked', () => parkedParentsFigures(ctx)],
    ['startup', () => startupFigures(ctx)],
  ];
  for (const [name, measure] of groups) {
    if (opts.only.length > 0 && !opts.only.includes(name)) continue;
    note(`${name}…`);
    try {
      for (const f of await measure()) {
        console.log(JSON.stringify(f));
        figures.push(f);
      }
    } catch (e) {
      failed = true;
      errors.push({ figure: name, error: (e as Error).message.slice(0, 2000) });
      console.log(JSON.stringify(errors.at(-1)));
    }
  }
  machine.loadEnd = os.loadavg()[0]!;
  const table = formatTable(figures);
  console.log(`\n${table}`);
  if (opts.save)
    note(`results written to ${saveResults({ figures, errors, table, machine, opts }).join(' and ')}`);
  note(`service logs in ${mesh.logDir}`);
} catch (e) {
  failed = true;
  note(`failed: ${(e as Error).stack}`);
} finally {
  await stopOnExit.run();
}
process.exit(failed ? 1 : 0);
