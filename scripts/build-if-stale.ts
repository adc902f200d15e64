// `npm start` builds first (README); an up-to-date build is skipped here, because tsc's own
// incremental check still loads every program (about 10 s of CPU for the four workspaces) to find
// that nothing changed. Stale means: a workspace has no build info yet, or a source, tsconfig or
// package manifest is newer than the oldest build info. Then the whole `npm run build` runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const workspaces = ['packages/shared', 'services/gateway', 'services/agent-runner', 'services/tool-host'];
const buildInfos = workspaces.map((w) => path.join(root, w, 'dist/.tsbuildinfo'));

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

// A directory's own time counts too: deleting or renaming a source changes it.
function newestUnder(dir) {
  let newest = mtime(dir) ?? 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : (mtime(full) ?? 0));
  }
  return newest;
}

function isStale() {
  const built = buildInfos.map(mtime);
  if (built.some((m) => m === undefined)) return true;
  const inputs = [
    'tsconfig.json',
    'package.json',
    'package-lock.json',
    ...workspaces.flatMap((w) => [`${w}/tsconfig.build.json`, `${w}/package.json`]),
  ].map((f) => mtime(path.join(root, f)) ?? Number.POSITIVE_INFINITY);
  const newestInput = Math.max(...inputs, ...workspaces.map((w) => newestUnder(path.join(root, w, 'src'))));
  return newestInput > Math.min(...built);
}

if (isStale()) {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
  // tsc leaves an unchanged build info untouched: mark the build as seen so the next start is quick.
  const now = new Date();
  for (const file of buildInfos) fs.utimesSync(file, now, now);
}
