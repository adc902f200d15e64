#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
// Builds .tap-build/: the repo as the tests run it, its TypeScript compiled once to JavaScript
// (swc, source-mapped to the .ts files), every other file linked in place. A test process then
// loads plain JavaScript with no loader hook: through a loader, each of the ~1,000 modules an
// end-to-end test imports costs a round trip to the loader's thread, about 2 s of CPU per test
// file, which on 2 cores was most of the test run (docs/guides/testing.md).
// The source tree stays the truth: this is rebuilt from it before every run, and `tsc` type-checks it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transformFile } from '@swc/core';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, '.tap-build');
// Never mirrored: tap's and coverage's outputs. Linked whole: git (the tests that ask it which
// files are tracked then see the mirror as the work tree), installs, the services' builds and the
// console (built by Vite, served from its dist/).
const SKIP = new Set(['.tap', '.tap-build', 'coverage']);
const LINKED = new Set(['.git', 'node_modules', 'dist', 'packages/console']);
const SWC = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022', transform: { useDefineForClassFields: true } },
  module: { type: 'es6' },
  sourceMaps: true,
  swcrc: false,
};

/** The workspaces' manifests, resolving to the compiled files (`./src/index.ts` → `./src/index.js`). */
function compiledManifest(text) {
  const pkg = JSON.parse(text);
  const toJs = (v) =>
    typeof v === 'string'
      ? v.replace(/\.ts$/, '.js')
      : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJs(x)]));
  if (pkg.exports) pkg.exports = toJs(pkg.exports);
  return JSON.stringify(pkg, null, 2);
}

/**
 * The root manifest: the tap configuration for the compiled test files, running as many files at
 * once as the machine has cores (tap's own default leaves one free: on 2 cores, one file at a time,
 * which left half the machine idle and doubled every tier's time), without the TypeScript
 * plugin, and without the mock plugin, which no test uses (no t.mockImport: the tests run the real
 * modules): its module hook cost every test process about 0.2 CPU-s on a small file and 0.6 on one
 * that loads a whole mesh, on 2 cores about 9 % of a tier's time.
 */
const LEFT_OUT_PLUGINS = ['@tapjs/typescript', '@tapjs/mock'];
function rootManifest(text) {
  const pkg = JSON.parse(text);
  const js = (pattern) => pattern.replace(/\.test\.ts$/, '.test.js');
  const plugin = LEFT_OUT_PLUGINS.map((p) => `!${p}`);
  pkg.tap = { ...pkg.tap, plugin, exclude: pkg.tap.exclude.map(js), jobs: os.availableParallelism() };
  return JSON.stringify(pkg, null, 2);
}

/** Gives `file` the times of `source` (in seconds: a Date would drop what is under a millisecond). */
function sameTimes(source, file) {
  const { atimeMs, mtimeMs } = fs.statSync(source);
  fs.utimesSync(file, atimeMs / 1000, mtimeMs / 1000);
}

async function compile(src, dst) {
  const { code, map } = await transformFile(src, { ...SWC, filename: src, sourceFileName: src });
  const js = dst.replace(/\.ts$/, '.js');
  fs.writeFileSync(`${js}.map`, map);
  fs.writeFileSync(js, `${code}\n//# sourceMappingURL=${path.basename(js)}.map\n`);
  for (const file of [js, `${js}.map`]) sameTimes(src, file);
}

const jobs = [];
// What the mirror made or rewrote, to give back its source's times once everything is written
// (keepTimes): linked files share their inode, and so their time, already, and a compiled file
// takes its source's (compile).
const retimed = [];
function mirror(rel) {
  const dir = path.join(ROOT, rel);
  fs.mkdirSync(path.join(OUT, rel), { recursive: true });
  retimed.push(rel);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const name = path.join(rel, entry.name);
    const src = path.join(ROOT, name);
    const dst = path.join(OUT, name);
    if (entry.isDirectory()) {
      if (name === 'node_modules') continue; // linkModules
      if (LINKED.has(entry.name) || LINKED.has(name)) fs.symlinkSync(src, dst);
      else if (!SKIP.has(entry.name)) mirror(name);
    } else if (entry.name === 'package.json') {
      const text = fs.readFileSync(src, 'utf8');
      fs.writeFileSync(dst, rel === '' ? rootManifest(text) : compiledManifest(text));
      retimed.push(name);
    } else {
      // Linked, not copied, and hard so that a directory walk sees files: tests read the docs,
      // fixtures and the sources (.ts included) through the same relative paths as in the repo.
      fs.linkSync(src, dst);
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) jobs.push(compile(src, dst));
    }
  }
}

/** node_modules: the installed packages as they are, the workspaces' links to the compiled mirror. */
function linkModules() {
  const out = path.join(OUT, 'node_modules');
  fs.mkdirSync(out);
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    const src = path.join(ROOT, 'node_modules', entry);
    if (entry !== '@agentmesh') fs.symlinkSync(src, path.join(out, entry));
    else {
      fs.mkdirSync(path.join(out, entry));
      // The workspace links are relative (../../packages/shared): in the mirror they name the mirror.
      for (const ws of fs.readdirSync(src))
        fs.symlinkSync(fs.readlinkSync(path.join(src, ws)), path.join(out, entry, ws));
    }
  }
}

/**
 * The mirror's directories and manifests get their sources' modification times back, as its compiled
 * files do: `npm start`
 * in the mirror (the full tier's start and image tests) builds the services when a source, a
 * directory or a manifest is newer than the last build (scripts/build-if-stale.ts), and with the
 * mirror's own times it rebuilt them in every fresh mirror — several files at once, racing on the
 * same dist/, about 40 CPU-s each — though the repository's build was up to date.
 */
function keepTimes() {
  for (const rel of retimed) {
    sameTimes(path.join(ROOT, rel), path.join(OUT, rel));
  }
}

const started = Date.now();
fs.rmSync(OUT, { recursive: true, force: true });
mirror('');
linkModules();
await Promise.all(jobs);
keepTimes();
// tap runs the mirror without its TypeScript and mock plugins (the mirror's package.json says so). A
// tap built with them, as npm installs it, picks its test files by the built plugins' extensions
// before it rebuilds itself, so its first run would take the .ts files too: rebuild it first.
const built = fs.readFileSync(
  path.join(ROOT, 'node_modules/@tapjs/test/test-built/dist/esm/index.js'),
  'utf8',
);
const signature = /export const signature = `([^`]*)`/.exec(built)?.[1] ?? '';
if (LEFT_OUT_PLUGINS.some((p) => signature.includes(p)))
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/tap/dist/esm/run.mjs'), 'build'], {
    cwd: OUT,
    stdio: 'inherit',
  });
console.log(`built .tap-build: ${jobs.length} TypeScript files in ${Date.now() - started} ms`);
