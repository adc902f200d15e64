#!/usr/bin/env node
// Prints the test files `npm run test:stock-queue` runs again with MESH_QUEUE_FASTPATH=off
// (docs/guides/testing.md): every test file that runs a runner — in the test's process or as a
// service process — in either tier, so every end-to-end and fault test passes on BullMQ's public
// API alone too. Left out: files that start the mesh through `npm start` (its shipped default),
// the browser tests (pages, not the queue), the fast path's own tests, which pin it on, and the
// Redis Cluster tests: the fast path is for one server, so a cluster runs the stock path in every
// pass already.
// Run from .tap-build/: prints `.js` files.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = process.cwd();
const STARTS_A_RUNNER =
  /\b(startMesh|buildRunner|addRunner|twoRunners|startPlannerAndHelperProcesses)\(|startService\([^)]*'runner'/;
const RUNS_NPM_START = /\bnpmStart\(|startWalkthroughs\(/;

function* testFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'fixtures', 'support', 'dist', 'cluster'].includes(entry.name))
        yield* testFiles(file);
    } else if (entry.name.endsWith('.test.js') && !entry.name.endsWith('-browser.test.js')) yield file;
  }
}

const chosen = [];
for (const top of ['test', 'services/agent-runner/test', 'services/gateway/test']) {
  for (const file of testFiles(path.join(ROOT, top))) {
    // The source, not the compiled file: it says what the test starts as its author wrote it.
    const source = fs.readFileSync(file.replace(/\.js$/, '.ts'), 'utf8');
    if (
      STARTS_A_RUNNER.test(source) &&
      !RUNS_NPM_START.test(source) &&
      !source.includes('pinQueueFastPath()')
    )
      chosen.push(path.relative(ROOT, file));
  }
}
console.log(chosen.sort().join('\n'));
