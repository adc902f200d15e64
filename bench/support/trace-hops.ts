import fs from 'node:fs';
import path from 'node:path';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import type { BarePipeline } from './bare-pipeline.js';
import { cpuTimeMs } from './cpu-time-ms.js';
import { ANSWER, type HopStep, hopTimeline, parseHopLines, SEND } from './hop-timeline.js';
import { hopMark, hopTrace } from './hop-trace.mjs';
import { type Spread, spread } from './spread.js';
import type { MeshProcesses } from './start-mesh-processes.js';

/** What one agent's traced runs showed (bench/hops.ts). */
export interface HopReport {
  agent: string;
  /** Each run's wall time untraced, then traced (the difference is the tracing's own cost), ms. */
  wallMs: Spread;
  tracedWallMs: Spread;
  /** CPU per run of each process (the untraced runs), ms: client, model, gateway, Redis, runners. */
  cpuPerRunMs: Record<string, number>;
  steps: HopStep[];
}

/** What is traced: its processes by role (whose CPU is read), and those signalled to trace (not Redis). */
export interface TracedProcesses {
  cpu: [string, number][];
  signalled: number[];
}

/** A traced mesh's processes, with the fake model's and this one's. */
export function meshProcesses(mesh: MeshProcesses, modelPid: number): TracedProcesses {
  return {
    cpu: [['client', process.pid], ['model', modelPid], ...mesh.processes()],
    signalled: [mesh.gateway.pid, mesh.toolHost.pid, modelPid, ...mesh.runners.map((r) => r.pid)],
  };
}

/** The bare floor's processes (bare-pipeline.ts) on the mesh's Redis, with the fake model's and this one's. */
export function bareProcesses(bare: BarePipeline, modelPid: number, redisPid: number): TracedProcesses {
  return {
    cpu: [
      ['client', process.pid],
      ['model', modelPid],
      ['gateway', bare.gatewayPid],
      ['redis', redisPid],
      ...bare.runnerPids.map((pid, i): [string, number] => [`runner ${i + 1}`, pid]),
    ],
    signalled: [modelPid, bare.gatewayPid, ...bare.runnerPids],
  };
}

/**
 * Runs `invoke` (`agent`'s run) `runs` times one after another, first untraced (wall and CPU of each
 * process), then traced: every process of the mesh (started with hop-trace.mjs and HOP_TRACE_DIR set)
 * notes its hops between SIGUSR2s, and the timeline is their median (hop-timeline.ts). Redis is not
 * signalled (it would stop); its commands are seen from both ends.
 */
export async function traceHops(
  procs: TracedProcesses,
  invoke: () => Promise<unknown>,
  agent: string,
  runs: number,
): Promise<HopReport> {
  const dir = process.env.HOP_TRACE_DIR;
  if (!dir) throw new Error('HOP_TRACE_DIR must be set before the mesh starts');
  const cpu0 = procs.cpu.map(([, pid]) => cpuTimeMs(pid));
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await invoke();
    wall.push(performance.now() - t0);
  }
  const cpuPerRunMs = Object.fromEntries(
    procs.cpu.map(([role, pid], i) => [role, Math.round(((cpuTimeMs(pid) - cpu0[i]!) / runs) * 1000) / 1000]),
  );
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));
  const { signalled } = procs;
  const toggle = () => {
    for (const pid of signalled) process.kill(pid, 'SIGUSR2');
  };
  toggle();
  hopTrace(true);
  await new Promise((r) => setTimeout(r, 100)); // every process has its signal
  const traced: number[] = [];
  for (let i = 0; i < runs; i++) {
    hopMark(SEND);
    const t0 = performance.now();
    await invoke();
    traced.push(performance.now() - t0);
    hopMark(ANSWER);
  }
  hopTrace(false);
  toggle();
  const files = () => fs.readdirSync(dir).filter((f) => f.endsWith('.txt'));
  await waitUntil(
    async () => files().length === signalled.length + 1,
    10_000,
    () => `every traced process's file (${files().join(', ')})`,
  );
  const events = files().flatMap((f) =>
    parseHopLines(f.slice(0, f.lastIndexOf('-')), fs.readFileSync(path.join(dir, f), 'utf8')),
  );
  return {
    agent,
    wallMs: spread(wall),
    tracedWallMs: spread(traced),
    cpuPerRunMs,
    steps: hopTimeline(events, { skip: Math.floor(runs / 10) }),
  };
}
