// `npm start` builds first (docs/guides/getting-started.md); an up-to-date build is skipped here,
// because tsc's own incremental check still loads every program (about 10 s of CPU for the four
// workspaces) to find that nothing changed. Stale means: a workspace has no build info yet, or a
// source, tsconfig or package manifest is newer than the oldest build info. Then the whole
// `npm run build` runs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKSPACES = ['packages/shared', 'services/gateway', 'services/agent-runner', 'services/tool-host'];
const buildInfos = (root: string) => WORKSPACES.map((w) => path.join(root, w, 'dist/.tsbuildinfo'));

function mtime(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

// A directory's own time counts too: deleting or renaming a source changes it.
function newestUnder(dir: string): number {
  let newest = mtime(dir) ?? 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : (mtime(full) ?? 0));
  }
  return newest;
}

/** Why the services under `root` must be built before they run (`first run`, …), or undefined. */
export function staleBuild(root = ROOT): string | undefined {
  const built = buildInfos(root).map(mtime);
  if (built.every((m) => m === undefined)) return 'first run';
  if (built.some((m) => m === undefined)) return 'a workspace was never built';
  const inputs = [
    'tsconfig.json',
    'package.json',
    'package-lock.json',
    ...WORKSPACES.flatMap((w) => [`${w}/tsconfig.build.json`, `${w}/package.json`]),
  ].map((f) => mtime(path.join(root, f)) ?? Number.POSITIVE_INFINITY);
  const newestInput = Math.max(...inputs, ...WORKSPACES.map((w) => newestUnder(path.join(root, w, 'src'))));
  return newestInput > Math.min(...(built as number[])) ? 'sources changed since the last build' : undefined;
}

/** How buildIfStale builds: the command (default `npm run -s build`), where, and who hears about it. */
export interface BuildOptions {
  root?: string;
  command?: [string, ...string[]];
  say(text: string): void;
  /** Gets the build's pid while it runs (undefined once it ended), so a caller can stop it. */
  onPid?(pid: number | undefined): void;
}

/**
 * Builds the services when they are stale, saying so first (`building the services (first run)…`:
 * tsc prints nothing for a minute) and how long it took after; tsc's errors reach our stderr.
 * Resolves with the build's exit code (0 when nothing had to be built).
 */
export async function buildIfStale(o: BuildOptions): Promise<number> {
  const root = o.root ?? ROOT;
  const why = staleBuild(root);
  if (!why) return 0;
  o.say(`building the services (${why})…`);
  const began = Date.now();
  const [command, ...args] = o.command ?? ['npm', 'run', '-s', 'build'];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    o.onPid?.(child.pid);
    child.once('error', () => resolve(1));
    child.once('exit', (status) => resolve(status ?? 1));
  });
  o.onPid?.(undefined);
  if (code !== 0) return code;
  // tsc leaves an unchanged build info untouched: mark the build as seen so the next start is quick.
  const now = new Date();
  for (const file of buildInfos(root)) fs.utimesSync(file, now, now);
  o.say(`built the services in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  return 0;
}

/**
 * Builds the console the gateway serves at /ui (docs/guides/console.md) when its sources changed since its
 * last build (`scripts/build-console.mjs`, which says so; a no-op otherwise). Resolves with its
 * exit code.
 */
export function buildConsoleIfStale(o: Pick<BuildOptions, 'root' | 'onPid'> = {}): Promise<number> {
  const root = o.root ?? ROOT;
  return new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/build-console.mjs')], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    o.onPid?.(child.pid);
    child.once('error', () => resolve(1));
    child.once('exit', (status) => {
      o.onPid?.(undefined);
      resolve(status ?? 1);
    });
  });
}

// Run as a script (the image's test builds this way).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode =
    (await buildIfStale({ say: (text) => process.stderr.write(`${text}\n`) })) ||
    (await buildConsoleIfStale());
}
