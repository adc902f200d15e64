// Builds the console (docs/guides/console.md) into packages/console/dist when its sources are newer than the
// last build, else does nothing (a few stat calls): `npm start`, `npm test`, `npm run gateway` and
// the image run it. Builds of concurrent callers (tests start gateways in parallel) take turns on
// a lock file, and each lands by renaming a finished directory into place, so a gateway serving
// the console meanwhile never sees half a build.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = path.join(root, 'packages/console');
const dist = path.join(pkg, 'dist');
const stamp = path.join(dist, '.built');
const lock = path.join(pkg, '.build.lock');
const INPUTS = ['src', 'public', 'index.html', 'vite.config.ts', 'package.json', 'tsconfig.json'];
const STALE_LOCK_MS = 120_000;

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

// A directory's own time counts too: deleting or renaming a source changes it.
function newest(file) {
  const own = mtime(file) ?? 0;
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) return own;
  let n = own;
  for (const entry of fs.readdirSync(file)) n = Math.max(n, newest(path.join(file, entry)));
  return n;
}

function isStale() {
  const built = mtime(stamp);
  if (built === undefined) return true;
  return Math.max(...INPUTS.map((f) => newest(path.join(pkg, f)))) > built;
}

function takeLock() {
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx'));
      return;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const age = Date.now() - (mtime(lock) ?? Date.now());
      if (age > STALE_LOCK_MS)
        fs.rmSync(lock, { force: true }); // its builder died
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

function build() {
  const vitePkg = createRequire(path.join(pkg, 'package.json')).resolve('vite/package.json');
  const vite = path.join(path.dirname(vitePkg), JSON.parse(fs.readFileSync(vitePkg, 'utf8')).bin.vite);
  const out = path.join(pkg, `dist.tmp-${process.pid}`);
  const old = path.join(pkg, `dist.old-${process.pid}`);
  fs.rmSync(out, { recursive: true, force: true });
  execFileSync(process.execPath, [vite, 'build', '--outDir', out], { cwd: pkg, stdio: 'inherit' });
  fs.writeFileSync(path.join(out, '.built'), '');
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  fs.renameSync(out, dist);
  fs.rmSync(old, { recursive: true, force: true });
}

if (isStale()) {
  takeLock();
  try {
    // Another caller may have built it while this one waited.
    if (isStale()) {
      const began = Date.now();
      process.stderr.write('building the console…\n');
      build();
      process.stderr.write(`built the console in ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
