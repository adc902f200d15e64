// spawnUntracked (test/support/untracked-spawn.ts): the processes tests start as services run
// without tap's process tracker, whatever else NODE_OPTIONS asks of them (the hop tracer of the
// bench's tests), and the same pid is the command's, so signals to it and to its group reach it.
import { type ChildProcess, spawn } from 'node:child_process';
import t from 'tap';
import { spawnUntracked, withoutTracker } from './support/untracked-spawn.js';

const TRACKER = '--import=file:///x/node_modules/@tapjs/processinfo/dist/esm/import.mjs';
const SHOW = 'console.log(JSON.stringify({ options: process.env.NODE_OPTIONS ?? null, pid: process.pid }))';

const output = (child: ChildProcess) =>
  new Promise<{ options: string | null; pid: number }>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.once('error', reject);
    child.once('exit', () => resolve(JSON.parse(text)));
  });

t.test('the tracker goes from NODE_OPTIONS; the rest stays, in order', async (t) => {
  t.equal(
    withoutTracker(`--enable-source-maps ${TRACKER} --import /tmp/hop.mjs`),
    '--enable-source-maps --import /tmp/hop.mjs',
  );
  t.equal(withoutTracker(TRACKER), '');
  t.equal(withoutTracker(undefined), '');
});

t.test('a process started under tap runs without the tracker, as the pid it was given', async (t) => {
  // tap runs this file with its tracker: a plain spawn gets it back, whatever its env says.
  t.match(process.env.NODE_OPTIONS ?? '', /@tapjs\/processinfo/, 'run by tap, with its tracker');
  const plain = await output(
    spawn(process.execPath, ['-e', SHOW], { env: { ...process.env, NODE_OPTIONS: '' } }),
  );
  t.match(plain.options, /@tapjs\/processinfo/, 'a plain spawn is tracked');

  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS} --max-old-space-size=200` };
  const child = spawnUntracked(process.execPath, ['-e', SHOW], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const seen = await output(child);
  t.equal(seen.options, '--max-old-space-size=200', 'untracked, with the rest of what it was given');
  t.equal(seen.pid, child.pid, 'the command itself, not a shell around it');

  const none = spawnUntracked(process.execPath, ['-e', SHOW], {
    env: { ...process.env, NODE_OPTIONS: TRACKER },
  });
  t.equal((await output(none)).options, null, 'nothing left: no NODE_OPTIONS at all');
});
