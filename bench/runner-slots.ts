// RUNNER_CONCURRENCY by measurement (docs/performance.md): what a runner's slot count does to runs/s, latency,
// memory, CPU and Redis, idle and under parent + 1 delegation loads at model-bound latencies. The mesh
// starts as `npm run bench` starts it (its own Redis, tool-host, gateway and 2 runners, the shipped
// defaults, the fake model in its own process); the runners are restarted with each slot count in
// turn, in another order each repetition, so the machine's drift reaches every count alike.
//
//   npm run -s build && npx tsx bench/runner-slots.ts
//
// BENCH_SLOTS (comma list, default 16,64,128,256,1024), BENCH_SLOT_LOADS (comma list of
// <latency ms>x<clients>, default 50x100,50x500,300x100,300x200,300x500), BENCH_REPS (3),
// BENCH_SECONDS per load (8), BENCH_WARMUP runs per restart (1000); BENCH_QUICK=1 for a smoke run.
// The client is Node's global fetch. Prints a JSON line per measurement, then a table of medians
// with their range over the repetitions.
import fs from 'node:fs';
import { freePort } from '@agentmesh/test-support/redis-server';
import { closedLoop } from './support/closed-loop.js';
import { cpuTimeOfMs } from './support/cpu-time-ms.js';
import { meshClient } from './support/mesh-client.js';
import { percentile } from './support/percentile.js';
import { rotate } from './support/rotate.js';
import { rssMb } from './support/rss-mb.js';
import { startBenchModel } from './support/start-bench-model.js';
import { type MeshProcesses, startMeshProcesses } from './support/start-mesh-processes.js';
import { stopOnExit } from './support/stop-on-exit.js';

const env = process.env;
const quick = env.BENCH_QUICK === '1';
const list = (name: string, fallback: string) => (env[name] || fallback).split(',').map((s) => s.trim());
const slots = list('BENCH_SLOTS', quick ? '16,256' : '16,64,128,256,1024').map(Number);
const loads = list('BENCH_SLOT_LOADS', quick ? '300x200' : '50x100,50x500,300x100,300x200,300x500').map(
  (l) => {
    const [latencyMs, clients] = l.split('x').map(Number);
    return { latencyMs: latencyMs!, clients: clients! };
  },
);
const reps = Number(env.BENCH_REPS || (quick ? 1 : 3));
const seconds = Number(env.BENCH_SECONDS || (quick ? 3 : 8));
const warmup = Number(env.BENCH_WARMUP || (quick ? 100 : 1000));
const IDLE_MS = quick ? 2000 : 5000;
const note = (text: string) => process.stderr.write(`runner-slots: ${text}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let metricsPorts: number[] = [];

/** One measurement: a slot count idle or under one load, in one repetition. */
interface Row {
  slots: number;
  load: string;
  rep: number;
  runsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** The larger runner's peak RSS over the window (sampled every 250 ms), MiB. */
  runnerRssMb: number;
  /** The larger runner's peak count of open sockets (Redis, the model, the tool-host), sampled alike. */
  runnerSockets: number;
  /** Mesh processes and Redis, CPU ms per run. */
  meshCpuMsPerRun?: number;
  /** Redis commands per run, those scripts ran inside Redis included (INFO's count). */
  redisCommandsPerRun?: number;
  /** The worst event-loop delay either runner saw over the window, ms (its /metrics, prom-client). */
  runnerLoopLagMaxMs?: number;
  /** Error lines the runners logged over the window (a lost job lock, mostly), per 1000 runs. */
  runnerErrorsPer1000?: number;
  /** Idle only: commands Redis processed per second, and its clients. */
  redisCommandsPerSecond?: number;
  redisClients?: number;
}

let failed = false;
try {
  const model = await startBenchModel(20);
  const mesh = await startMeshProcesses(model.url, 20, 2);
  const invoke = meshClient(mesh.gatewayUrl, 'fetch');
  const rows: Row[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const n of rotate(slots, rep)) {
      // Each runner's metrics on a port of its own: the event-loop delay it saw.
      await mesh.setRunners(0);
      const ports = [await freePort(), await freePort()];
      await Promise.all(
        ports.map((port) =>
          mesh.addRunner({ RUNNER_CONCURRENCY: String(n), RUNNER_METRICS_PORT: String(port) }),
        ),
      );
      metricsPorts = ports;
      await model.setLatency(0);
      await warm(invoke, warmup);
      rows.push(emit(await idle(mesh, n, rep)));
      for (const { latencyMs, clients } of loads) {
        await model.setLatency(latencyMs);
        rows.push(emit(await underLoad(mesh, () => invoke('parent'), n, rep, latencyMs, clients)));
        await model.setLatency(0);
        await sleep(500); // the last runs' jobs complete
      }
      note(`repetition ${rep + 1}/${reps}: ${n} slots done`);
    }
  }
  console.log(`\n${table(rows)}`);
} catch (e) {
  failed = true;
  note(`failed: ${(e as Error).stack}`);
} finally {
  await stopOnExit.run();
}
process.exit(failed ? 1 : 0);

function emit(row: Row): Row {
  console.log(JSON.stringify(row));
  return row;
}

/** `runs` runs of single, parent and fan, 10 at a time at latency 0: the fresh runners JIT-compiled. */
async function warm(invoke: (agent: string) => Promise<unknown>, runs: number): Promise<void> {
  const agents = ['single', 'parent', 'parent', 'fan'];
  await Promise.all(
    Array.from({ length: 10 }, async (_, c) => {
      for (let i = c; i < runs; i += 10) await invoke(agents[i % agents.length]!);
    }),
  );
}

async function redisStats(mesh: MeshProcesses) {
  const stats = await mesh.redis.info('stats');
  const clients = await mesh.redis.info('clients');
  return {
    commands: Number(/total_commands_processed:(\d+)/.exec(stats)![1]),
    clients: Number(/connected_clients:(\d+)/.exec(clients)![1]),
  };
}

/** The larger max event-loop delay of the runners since their last scrape (prom-client resets it), ms. */
async function loopLagMaxMs(): Promise<number> {
  let worst = 0;
  for (const port of metricsPorts) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    worst = Math.max(worst, Number(/^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text)?.[1] ?? 0));
  }
  return Math.round(worst * 1000);
}

/** Error lines (pino level 50) in the current runners' logs so far. */
function runnerErrors(mesh: MeshProcesses): number {
  let n = 0;
  for (const r of mesh.runners) n += fs.readFileSync(r.logFile, 'utf8').split('"level":50').length - 1;
  return n;
}

/** Runner RSS and open sockets sampled every 250 ms until `stop()`: the larger runner's peaks. */
function sampleRunners(mesh: MeshProcesses) {
  let rss = 0;
  let sockets = 0;
  const read = () => {
    for (const r of mesh.runners) {
      rss = Math.max(rss, rssMb(r.pid));
      sockets = Math.max(sockets, socketsOf(r.pid));
    }
  };
  read();
  const timer = setInterval(read, 250);
  return () => {
    clearInterval(timer);
    read();
    return { runnerRssMb: Math.round(rss), runnerSockets: sockets };
  };
}

/** Open sockets of a process, from its file descriptors. */
function socketsOf(pid: number): number {
  let n = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

async function idle(mesh: MeshProcesses, n: number, rep: number): Promise<Row> {
  await sleep(1000);
  const sampled = sampleRunners(mesh);
  const before = await redisStats(mesh);
  await sleep(IDLE_MS);
  const after = await redisStats(mesh);
  return {
    slots: n,
    load: 'idle',
    rep,
    ...sampled(),
    redisCommandsPerSecond: Math.round(((after.commands - before.commands - 2) / IDLE_MS) * 1000),
    redisClients: after.clients,
  };
}

async function underLoad(
  mesh: MeshProcesses,
  run: () => Promise<unknown>,
  n: number,
  rep: number,
  latencyMs: number,
  clients: number,
): Promise<Row> {
  const sampled = sampleRunners(mesh);
  const before = await redisStats(mesh);
  const errors0 = runnerErrors(mesh);
  await loopLagMaxMs(); // the runners' event-loop delay is measured from here
  const meshCpu = () => cpuTimeOfMs(mesh.pids());
  const load = await closedLoop(run, clients, seconds, { mesh: meshCpu });
  const after = await redisStats(mesh);
  const round1 = (x: number) => Math.round(x * 10) / 10;
  return {
    slots: n,
    load: `${latencyMs}ms×${clients}`,
    rep,
    runsPerSecond: round1(load.runsPerSecond),
    p50Ms: Math.round(percentile(load.latenciesMs, 0.5)),
    p99Ms: Math.round(percentile(load.latenciesMs, 0.99)),
    ...sampled(),
    meshCpuMsPerRun: round1(load.cpuMsPerRun.mesh!),
    redisCommandsPerRun: round1((after.commands - before.commands) / load.runs),
    runnerLoopLagMaxMs: await loopLagMaxMs(),
    runnerErrorsPer1000: round1(((runnerErrors(mesh) - errors0) / load.runs) * 1000),
  };
}

/** Per load, a row per slot count: the median of each measure over the repetitions, with its range. */
function table(rows: Row[]): string {
  const measures = [
    ['runs/s', 'runsPerSecond'],
    ['p50 ms', 'p50Ms'],
    ['p99 ms', 'p99Ms'],
    ['runner RSS MiB', 'runnerRssMb'],
    ['runner sockets', 'runnerSockets'],
    ['mesh CPU ms/run', 'meshCpuMsPerRun'],
    ['Redis cmds/run', 'redisCommandsPerRun'],
    ['runner loop lag max ms', 'runnerLoopLagMaxMs'],
    ['runner errors /1000 runs', 'runnerErrorsPer1000'],
    ['Redis cmds/s', 'redisCommandsPerSecond'],
    ['Redis clients', 'redisClients'],
  ] as const;
  const cell = (xs: number[]) => {
    if (xs.length === 0) return '—';
    const sorted = [...xs].sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
    return sorted.length === 1 ? `${median}` : `${median} (${sorted[0]}–${sorted.at(-1)})`;
  };
  const out = [
    `| load | slots | ${measures.map((m) => m[0]).join(' | ')} |`,
    `|---|---|${'---|'.repeat(measures.length)}`,
  ];
  for (const load of ['idle', ...loads.map((l) => `${l.latencyMs}ms×${l.clients}`)])
    for (const n of slots) {
      const of = rows.filter((r) => r.load === load && r.slots === n);
      const cells = measures.map(([, key]) =>
        cell(of.map((r) => r[key]).filter((x): x is number => x !== undefined)),
      );
      out.push(`| ${load} | ${n} | ${cells.join(' | ')} |`);
    }
  return out.join('\n');
}
