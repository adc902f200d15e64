// `npm start` as a user runs it, for the tests of test/start-*.test.ts: its own process group (the
// teardown kills whatever is left), every line of its output kept.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnUntracked } from './untracked-spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for `promise`, or `ms` at most, and clears its timer either way: a bare
 * `Promise.race([p, sleep(ms)])` leaves the timer pending, which keeps the test process alive for
 * the rest of `ms` after its last test (30 s per file with a 30 s grace).
 */
export async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A running `npm start`: its output so far, its exit, and a kill for the whole group. */
export interface NpmStart {
  pgid: number;
  /** stdout and stderr as they arrived. */
  output(): string;
  stdout(): string;
  exited: Promise<number | null>;
  readonly exitCode: number | null;
  /** SIGKILL to the group (and to any extra pid given), ignoring what is gone. */
  kill(...extra: (number | undefined)[]): void;
}

/** The environment `npm start` gets in tests: the caller's ports, nothing inherited that redirects it. */
export function startEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...vars };
  for (const name of [
    'MODEL_BASE_URL',
    'TOOL_HOST_URL',
    'MESH_CONFIG',
    'MESH_API_KEYS',
    'MESH_PREFIX',
    'HOST',
    'LOG_LEVEL',
    'LOG_FORMAT',
    'RUNNER_METRICS_PORT',
  ]) {
    if (!(name in vars)) delete env[name];
  }
  withoutCoverage(env);
  return env;
}

/** Runs `npm start` (or `npm <args>`: `run dev`) with `env`, its stdout and stderr piped (so not a terminal). */
export function npmStart(env: NodeJS.ProcessEnv, args: string[] = ['start']): NpmStart {
  const npm = spawnUntracked('npm', args, {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let out = '';
  npm.stdout!.on('data', (d: Buffer) => {
    all += d.toString();
    out += d.toString();
  });
  npm.stderr!.on('data', (d: Buffer) => {
    all += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return {
    pgid: npm.pid!,
    output: () => all,
    stdout: () => out,
    exited,
    get exitCode() {
      return npm.exitCode;
    },
    kill(...extra) {
      for (const target of [-npm.pid!, ...extra]) {
        try {
          if (target !== undefined) process.kill(target, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    },
  };
}

/** Polls `probe` until it gives a value; throws after `ms`. */
export async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(250)) {
    const value = await probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

/** Processes as `pid args` lines: a group's (`-g pgid`) or everyone's (`-e`); none when ps finds none. */
export function processes(...select: string[]): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', ...select], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * `npm start` runs the compiled services (dist/, source-mapped to src/): their V8 coverage would be
 * merged with the in-process tests' coverage of the same TypeScript files under other statement
 * maps and clobber it, so these processes are not measured (the sources are, in-process).
 */
export function withoutCoverage(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // tap's processinfo re-adds its NODE_OPTIONS to every spawn; this switch is what it honours, and
  // it passes it on to the whole process tree.
  env._TAPJS_PROCESSINFO_COVERAGE_ = '0';
  return env;
}

/**
 * Stops an `npm start` as Ctrl-C would (SIGTERM to its group: it drains the services, then stops
 * the private Redis it started, which has a group of its own), then kills whatever is left,
 * that Redis included (found by the port npm start printed).
 */
export async function stopNpmStart(npm: NpmStart, graceMs = 30_000): Promise<void> {
  const redisPort = /private Redis ready at redis:\/\/127\.0\.0\.1:(\d+)/.exec(npm.output())?.[1];
  try {
    process.kill(-npm.pgid, 'SIGTERM');
  } catch {
    // gone already
  }
  await atMost(npm.exited, graceMs);
  const redis = redisPort
    ? processes('-e')
        .filter((p) => p.includes(`redis-server 127.0.0.1:${redisPort}`))
        .map((p) => Number(p.split(' ')[0]))
    : [];
  npm.kill(...redis);
}
