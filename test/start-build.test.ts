// `npm start` builds the services when their sources are newer than the build (docs/guides/getting-started.md), and
// says so: tsc prints nothing for most of a minute on a first run. Here on a tree of its own, with
// a stand-in for `npm run build` that writes the build infos as tsc would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildIfStale, staleBuild } from '../scripts/build-if-stale.js';

const WORKSPACES = ['packages/shared', 'services/gateway', 'services/agent-runner', 'services/tool-host'];
const FAKE_TSC = `for (const w of ${JSON.stringify(WORKSPACES)}) {
  require('node:fs').mkdirSync(w + '/dist', { recursive: true });
  require('node:fs').writeFileSync(w + '/dist/.tsbuildinfo', '{}');
}`;

function tree(t: Test): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-if-stale-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const f of ['tsconfig.json', 'package.json', 'package-lock.json'])
    fs.writeFileSync(path.join(root, f), '{}');
  for (const w of WORKSPACES) {
    fs.mkdirSync(path.join(root, w, 'src'), { recursive: true });
    fs.writeFileSync(path.join(root, w, 'src/index.ts'), 'export {};\n');
    fs.writeFileSync(path.join(root, w, 'package.json'), '{}');
    fs.writeFileSync(path.join(root, w, 'tsconfig.build.json'), '{}');
  }
  return root;
}

t.test('a first run says it builds, then how long it took; an up-to-date build says nothing', async (t) => {
  const root = tree(t);
  const said: string[] = [];
  const run = (script = FAKE_TSC) =>
    buildIfStale({ root, command: [process.execPath, '-e', script], say: (s) => void said.push(s) });
  t.equal(staleBuild(root), 'first run');
  t.equal(await run(), 0);
  t.equal(said[0], 'building the services (first run)…');
  t.match(said[1], /^built the services in \d+\.\d s$/);
  t.equal(staleBuild(root), undefined, 'built');

  said.length = 0;
  t.equal(await run(), 0);
  t.strictSame(said, [], 'nothing to build, nothing said');

  const source = path.join(root, 'services/gateway/src/index.ts');
  const later = new Date(Date.now() + 5000);
  fs.utimesSync(source, later, later);
  t.equal(await run('process.exit(2)'), 2, 'a failed build answers its exit code');
  t.strictSame(said, ['building the services (sources changed since the last build)…'], 'and no time');
});
