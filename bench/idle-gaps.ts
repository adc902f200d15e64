// What waiting costs a process on this machine (docs/architecture/where-the-time-goes.md, "What a
// wait costs"): the same sequential single runs, each client pausing 0, 1 or 3 ms between runs, on
// three sides taking turns — the mesh as `npm run bench` starts it, the bare pipeline (its hops with
// none of its work, bench/support/bare-pipeline.ts) and the SDK in this process — with the CPU per
// run of every process a side needs (this process, the fake model's, and the side's own). A pause
// leaves every process of a side idle that long; what a run then costs more, on each side, is what
// waking costs here. A mesh run passes through its processes in turn, so each waits while the others
// work, and a runner of two taking turns waits a whole run: the SDK's one process waits only on
// the model.
//
//   npm run -s build && npx tsx bench/idle-gaps.ts
//
// BENCH_IDLE_PAUSES (comma list of ms, default 0,1,3), BENCH_IDLE_AGENT (single or parent),
// BENCH_IDLE_RUNNERS (the mesh's runners, 2), BENCH_RUNS per side and pause (1000), BENCH_WARMUP runs of
// each side first (2000), BENCH_AB_CLIENT (undici or fetch).
import fs from 'node:fs';
import { sdkBaseline } from './sdk-baseline.js';
import { type AbResult, type AbSide, abTurns } from './support/ab-turns.js';
import { startBarePipeline } from './support/bare-pipeline.js';
import { type ClientName, meshClient } from './support/mesh-client.js';
import { startBenchModel } from './support/start-bench-model.js';
import { startMeshProcesses } from './support/start-mesh-processes.js';
import { stopOnExit } from './support/stop-on-exit.js';
import { bareProcesses, meshProcesses } from './support/trace-hops.js';

const env = process.env;
const pauses = (env.BENCH_IDLE_PAUSES || '0,1,3').split(',').map(Number);
const agent = env.BENCH_IDLE_AGENT === 'parent' ? 'parent' : 'single';
const runs = Number(env.BENCH_RUNS || 1000);
const warmup = Number(env.BENCH_WARMUP || 2000);
const client = (env.BENCH_AB_CLIENT || 'undici') as ClientName;
const note = (text: string) => process.stderr.write(`idle-gaps: ${text}\n`);
if (pauses.some((p) => !Number.isFinite(p) || p < 0))
  throw new Error('BENCH_IDLE_PAUSES: ms, comma-separated');

process.on('SIGINT', () => void stopOnExit.run().finally(() => process.exit(130)));
try {
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, Number(env.BENCH_IDLE_RUNNERS || 2));
  const bare = await startBarePipeline(mesh.redisUrl, model.url);
  stopOnExit.add(() => bare.stop());
  const sdk = sdkBaseline(model.url);
  const invoke = meshClient(mesh.gatewayUrl, client);
  const sides: AbSide[] = [
    { name: 'mesh', invoke, processes: () => meshProcesses(mesh, model.pid).cpu },
    {
      name: 'bare',
      invoke: () => bare.invoke(agent),
      processes: () => bareProcesses(bare, model.pid, mesh.redisPid).cpu,
    },
    {
      name: 'sdk',
      invoke: () => sdk.run(agent),
      processes: () => [
        ['sdk', process.pid],
        ['model', model.pid],
      ],
    },
  ];
  note(`${idleFacts()}; warming up: ${warmup} runs a side`);
  for (const side of sides) for (let i = 0; i < warmup; i++) await side.invoke(agent);
  // Every side at every pause takes its turn in each round of blocks: the machine's drift reaches all.
  const paused = pauses.flatMap((pauseMs) => sides.map((side) => ({ ...side, pauseMs })));
  note(`${agent}: ${runs} runs a side and pause (${pauses.join(', ')} ms), in turns`);
  const results = await abTurns(paused, agent, runs);
  const byPause = new Map(pauses.map((p, i) => [p, results.slice(i * sides.length, (i + 1) * sides.length)]));
  print(byPause);
} finally {
  await stopOnExit.run();
}

/** How this machine's cores idle (Linux cpuidle), when it says: its driver, and a guest's halt-polling time. */
function idleFacts(): string {
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const driver = read('/sys/devices/system/cpu/cpuidle/current_driver') ?? 'unknown';
  const poll = read('/sys/module/haltpoll/parameters/guest_halt_poll_ns');
  return `cpuidle driver ${driver}${poll === undefined ? '' : `, guest_halt_poll_ns ${poll}`}`;
}

function print(byPause: Map<number, AbResult[]>): void {
  const base = byPause.get(pauses[0]!)!;
  const f = (x: number) => x.toFixed(3);
  console.log(`\n## ${agent}, one client (${client}), pausing between runs\n`);
  console.log(
    `| pause ms | side | p50 ms | CPU per run ms | × at ${pauses[0]} ms (p50 / CPU) | CPU by process (ms) |`,
  );
  console.log('| ---: | --- | ---: | ---: | --- | --- |');
  for (const [pause, results] of byPause)
    for (const [i, r] of results.entries()) {
      const b = base[i]!;
      const parts = Object.entries(r.cpuPerRunByProcessMs).map(([role, ms]) => `${role} ${f(ms)}`);
      console.log(
        `| ${pause} | ${r.name} | ${f(r.wallMs.p50)} | ${f(r.cpuPerRunMs)} | ` +
          `${(r.wallMs.p50 / b.wallMs.p50).toFixed(2)} / ${(r.cpuPerRunMs / b.cpuPerRunMs).toFixed(2)} | ${parts.join(', ')} |`,
      );
    }
  console.log(JSON.stringify({ agent, client, pauses: Object.fromEntries(byPause) }));
}
