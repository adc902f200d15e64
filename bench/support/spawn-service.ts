import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { spawnUntracked } from '@agentmesh/test-support/untracked-spawn';
import { shippedEnv } from './shipped-env.js';
import { stopOnExit } from './stop-on-exit.js';

/** A mesh service started as its own process: its pid is the node process that does the work. */
export interface Service {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** Where its output goes. */
  logFile: string;
  exited: Promise<void>;
  /** SIGTERM (drain), then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const repoRoot = path.resolve(import.meta.dirname, '../..');
const dirs = { gateway: 'gateway', runner: 'agent-runner', 'tool-host': 'tool-host' } as const;

/** How a service runs: compiled (production, `npm run build` first) or its sources through tsx. */
export type ServiceMode = 'dist' | 'tsx';

/** The node arguments that start `kind` in `mode`. */
export function serviceArgs(kind: keyof typeof dirs, mode: ServiceMode): string[] {
  return mode === 'dist'
    ? ['--conditions=agentmesh-dist', `services/${dirs[kind]}/dist/main.js`]
    : ['--import', 'tsx', `services/${dirs[kind]}/src/main.ts`];
}

/**
 * Starts a service as production runs it, `node --conditions=agentmesh-dist <dist/main.js>` (the
 * bench builds first), or from its sources with `mode: 'tsx'`: one process per service, no npm
 * or tsx CLI wrapper in between, so its pid is the one whose CPU and RSS the bench reads.
 * It runs with the shipped defaults (shipped-env.ts) and `env`; its output, at the default
 * LOG_LEVEL (info, a line per request and per invocation's start and end), goes to `logFile`. With `BENCH_CPU_PROF=<dir>`
 * each service writes V8 CPU profiles to <dir>/<service>-<n>/ when it exits (so stop it with a grace
 * period, not SIGKILL). `root` is the checkout whose services run (another one's in bench/ab.ts).
 */
export function spawnService(
  kind: keyof typeof dirs,
  env: Record<string, string>,
  logFile: string,
  mode: ServiceMode = 'dist',
  root = repoRoot,
): Service {
  const fd = fs.openSync(logFile, 'a');
  const profile = process.env.BENCH_CPU_PROF;
  const profileDir = profile && path.resolve(profile, path.basename(logFile, '.log'));
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const extra = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // Under tap (the bench's tests), without its process tracker; as it is otherwise.
  const proc = spawnUntracked(process.execPath, [...profiling, ...extra, ...serviceArgs(kind, mode)], {
    cwd: root,
    env: { ...shippedEnv(process.env), ...env },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const pid = proc.pid!;
  stopOnExit.track(pid);
  const exited = new Promise<void>((r) =>
    proc.once('exit', () => {
      stopOnExit.untrack(pid);
      r();
    }),
  );
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  return {
    name: kind,
    proc,
    pid,
    logFile,
    exited,
    stop: async (graceMs = 10_000) => {
      if (gone()) return;
      proc.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
