import { cpuTimeMs } from './cpu-time-ms.js';
import { type ClientName, type MeshInvoke, meshClient } from './mesh-client.js';
import { percentile } from './percentile.js';
import { type MeshStartOptions, startMeshProcesses } from './start-mesh-processes.js';

/** One side of an A/B (bench/ab.ts): how to run an agent on it, and the processes its CPU is read from. */
export interface AbSide {
  name: string;
  invoke: MeshInvoke;
  /** Its processes by role, whose CPU a run costs (MeshProcesses.processes). */
  processes(): [string, number][];
  /**
   * How long each client waits after a run ends before it starts the next (0: at once): a caller
   * that does something else between runs, which leaves every process of the side idle that long
   * (bench/idle-gaps.ts). Its runs a second count the pauses too.
   */
  pauseMs?: number;
}

/** What one side measured over its blocks: each run's wall time, and its processes' CPU per run. */
export interface AbResult {
  name: string;
  wallMs: { p10: number; p50: number; p90: number };
  cpuPerRunMs: number;
  /** The same, process by process, by role. */
  cpuPerRunByProcessMs: Record<string, number>;
  runs: number;
  /** Runs a second over its own blocks (with one client, the inverse of the mean wall time). */
  runsPerSecond: number;
}

/** How one side of an A/B is started (bench/ab.ts reads it from BENCH_AB_*_A / _B). */
export interface AbSideOptions extends MeshStartOptions {
  /** Its runners, each hosting every agent (the shipped 2 unless told). */
  runners?: number;
  /** The agents (RUNNER_AGENTS) of one more runner, which hosts only those. */
  extraRunnerAgents?: string;
  client?: ClientName;
}

/**
 * A side: a mesh started as the bench starts it, with its settings (the extra runner is its last);
 * its services' logs are in logDir.
 */
export async function startAbSide(
  name: string,
  modelUrl: string,
  { runners = 2, extraRunnerAgents, client = 'undici', ...start }: AbSideOptions = {},
): Promise<AbSide & { logDir: string }> {
  const mesh = await startMeshProcesses(modelUrl, 1, runners, start);
  if (extraRunnerAgents) await mesh.addRunner({ RUNNER_AGENTS: extraRunnerAgents });
  return {
    name,
    invoke: meshClient(mesh.gatewayUrl, client),
    processes: mesh.processes,
    logDir: mesh.logDir,
  };
}

/** Sequential runs per block, the sides taking turns (as bench/support/in-turns.ts). */
const BLOCK = 20;
/** A pause before each block: the other side's tail (its job's completion after the answer) is done. */
const SETTLE_MS = 20;

/**
 * The sides' turns in one round: each side's index once, the order reversed on odd rounds (so
 * neither side always follows the other's tail), each after the settle pause.
 */
async function* turnOrder(sides: number, round: number): AsyncGenerator<number> {
  for (let k = 0; k < sides; k++) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    yield round % 2 === 1 ? sides - 1 - k : k;
  }
}

/** `K=V,K=V` as an environment (BENCH_AB_ENV_A / _B). */
export function parseSideEnv(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`"${pair}" is not K=V`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/**
 * `runs` runs of `agent` on each side, in blocks of 20 a client with the sides taking turns (the
 * first side of each block alternating, so neither always follows the other's tail): a change of
 * the machine's speed reaches both alike. `clients` clients run a block's runs at once, each
 * starting its next run as its last one ends (1: sequential runs), or the side's `pauseMs` after.
 * Each side's CPU is the sum of its processes' CPU time (/proc) over its own blocks only, also read
 * process by process.
 */
export async function abTurns(
  sides: readonly AbSide[],
  agent: string,
  runs: number,
  clients = 1,
): Promise<AbResult[]> {
  const walls = sides.map(() => [] as number[]);
  const cpu = sides.map(() => ({}) as Record<string, number>);
  const blockMs = sides.map(() => 0);
  for (let done = 0, block = 0; done < runs; done += BLOCK * clients, block++) {
    const n = Math.min(BLOCK * clients, runs - done);
    for await (const i of turnOrder(sides.length, block)) {
      const side = sides[i]!;
      const processes = side.processes();
      const before = processes.map(([, pid]) => cpuTimeMs(pid));
      const start = performance.now();
      let left = n;
      await Promise.all(
        Array.from({ length: Math.min(clients, n) }, async () => {
          while (left > 0) {
            left--;
            const t0 = performance.now();
            await side.invoke(agent);
            walls[i]!.push(performance.now() - t0);
            if (side.pauseMs) await new Promise((r) => setTimeout(r, side.pauseMs));
          }
        }),
      );
      blockMs[i]! += performance.now() - start;
      processes.forEach(([role, pid], p) => {
        cpu[i]![role] = (cpu[i]![role] ?? 0) + cpuTimeMs(pid) - before[p]!;
      });
    }
  }
  return sides.map((side, i) => result(side.name, walls[i]!, cpu[i]!, runs, blockMs[i]!));
}

/** What a side measured: the runs' wall times, its processes' CPU (by role) and the time they took. */
function result(
  name: string,
  walls: number[],
  cpu: Record<string, number>,
  runs: number,
  ms: number,
): AbResult {
  return {
    name,
    wallMs: { p10: percentile(walls, 0.1), p50: percentile(walls, 0.5), p90: percentile(walls, 0.9) },
    cpuPerRunMs: Object.values(cpu).reduce((a, b) => a + b, 0) / runs,
    cpuPerRunByProcessMs: Object.fromEntries(Object.entries(cpu).map(([role, x]) => [role, x / runs])),
    runs,
    runsPerSecond: (runs * 1000) / ms,
  };
}

/** How abWindows reads a steady load: each side's turns, and the length of each turn's parts. */
export interface WindowOptions {
  /** Turns of each side. */
  turns: number;
  /** The part of a turn that is read. */
  windowMs: number;
  /** The part before it, not read: the clients start, the load settles. */
  rampMs: number;
}

/**
 * A steady load in turns: each side in turn has `clients` clients run `agent` back to back (each
 * starting its next run as its last one ends) for `rampMs` and then `windowMs`, and is read over
 * the window alone: the runs that ended in it, their wall times, its processes' CPU between the
 * window's two ends. After the window its clients start nothing more and the runs in flight end
 * unread before the other side's turn; the first side of each round alternates. abTurns's blocks
 * start their clients together and wait for the last run, which at hundreds of clients is a burst
 * and a tail each block; this reads the load between them.
 */
export async function abWindows(
  sides: readonly AbSide[],
  agent: string,
  clients: number,
  { turns, windowMs, rampMs }: WindowOptions,
): Promise<AbResult[]> {
  const walls = sides.map(() => [] as number[]);
  const cpu = sides.map(() => ({}) as Record<string, number>);
  const runs = sides.map(() => 0);
  const spent = sides.map(() => 0);
  for (let round = 0; round < turns; round++) {
    for await (const i of turnOrder(sides.length, round)) {
      const side = sides[i]!;
      const processes = side.processes();
      // The window, once it opens: a run counts when it ends between the two CPU readings.
      let from = Number.POSITIVE_INFINITY;
      let to = Number.POSITIVE_INFINITY;
      let stopped = false;
      const loops = Array.from({ length: clients }, async () => {
        while (!stopped) {
          const t0 = performance.now();
          await side.invoke(agent);
          const t1 = performance.now();
          if (t1 >= from && t1 <= to) {
            runs[i]!++;
            walls[i]!.push(t1 - t0);
          }
        }
      });
      // A failed run ends the turn and the A/B at once, its error thrown here.
      const done = Promise.all(loops);
      done.catch(() => {
        stopped = true;
      });
      const wait = (ms: number) => Promise.race([new Promise((r) => setTimeout(r, ms)), done]);
      await wait(rampMs);
      const before = processes.map(([, pid]) => cpuTimeMs(pid));
      from = performance.now();
      await wait(windowMs);
      const after = processes.map(([, pid]) => cpuTimeMs(pid));
      to = performance.now();
      spent[i]! += to - from;
      stopped = true;
      await done;
      processes.forEach(([role], p) => {
        cpu[i]![role] = (cpu[i]![role] ?? 0) + after[p]! - before[p]!;
      });
    }
  }
  return sides.map((side, i) => result(side.name, walls[i]!, cpu[i]!, runs[i]!, spent[i]!));
}
