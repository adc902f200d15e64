// The runner's fetch steps (BullMQ's, with the marker put back only when another job waits): an
// idle worker is not woken by a job another worker takes, the taker fetches once more and then
// blocks, and nothing BullMQ's marker is for is lost — a burst spread over workers, a delayed job.
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { type BullScript, defineFetchScripts, fetchScripts } from '../src/runner/fetch-scripts.js';

const redis = await startRedis();
t.teardown(() => redis.stop());
const QUEUE = 'fetch';

const until = (check: () => boolean, what: string, ms = 5000) =>
  waitUntil(
    async () => check(),
    ms,
    () => what,
  );

/** Two workers on one queue, each on its own connection, as two runners would be. */
async function twoWorkers(t: Test, patched: boolean, done: string[], by = new Map<string, number>()) {
  const workers = ['w1', 'w2'].map((name) => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    if (patched) defineFetchScripts(connection);
    const worker = new Worker(
      QUEUE,
      async (job) => {
        done.push(`${job.id}`);
        by.set(name, (by.get(name) ?? 0) + 1);
        if (job.name === 'slow') await new Promise((r) => setTimeout(r, 20));
      },
      { connection, name, concurrency: 8, prefix: `p${patched ? 1 : 0}` },
    );
    worker.on('closed', () => connection.disconnect());
    return worker;
  });
  t.teardown(() => Promise.all(workers.map((w) => w.close())));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const queue = new Queue(QUEUE, { connection: { port: redis.port }, prefix: `p${patched ? 1 : 0}` });
  t.teardown(() => queue.close());
  // Both have fetched once, found nothing and block on the marker.
  await new Promise((r) => setTimeout(r, 300));
  return queue;
}

/** The fetches (moveToActive) and blocking pops a job cost, by client. */
function fetches(seen: MonitoredCommand[]) {
  const active = seen.filter(
    (c) =>
      c.source !== 'lua' &&
      c.args[0] === 'evalsha' &&
      c.args[3]?.endsWith(':wait') &&
      c.args[4]?.endsWith(':active') &&
      c.args[2] === '11',
  );
  const pops = seen.filter((c) => c.args[0]?.toLowerCase() === 'bzpopmin');
  return { active, pops, clients: new Set([...active, ...pops].map((c) => c.source)) };
}

async function oneJob(t: Test, patched: boolean) {
  const done: string[] = [];
  const queue = await twoWorkers(t, patched, done);
  const monitor = await monitorRedis(redis.port);
  await queue.add('j', {}, { jobId: 'one' });
  await until(() => done.length === 1, 'the job');
  await new Promise((r) => setTimeout(r, 300)); // the fetches that follow the job
  monitor.stop();
  return fetches(monitor.seen);
}

t.test(
  'a job taken from an idle queue wakes no other worker, and its taker blocks after one more fetch',
  async (t) => {
    const patched = await oneJob(t, true);
    t.equal(patched.clients.size, 2, 'one worker: its fetching and its blocking connection');
    t.equal(patched.active.length, 2, 'the fetch that takes the job and one that finds the queue empty');
    t.equal(patched.pops.length, 1, 'then it blocks');
  },
);

t.test("BullMQ's own steps, for contrast: every worker is woken for the same job", async (t) => {
  const stock = await oneJob(t, false);
  t.ok(stock.active.length >= 3, `${stock.active.length} fetches`);
  t.ok(stock.clients.size >= 3, `${stock.clients.size} clients`);
});

t.test('a burst is spread over the workers: the marker stays while jobs wait', async (t) => {
  const done: string[] = [];
  const by = new Map<string, number>();
  const queue = await twoWorkers(t, true, done, by);
  await queue.addBulk(
    Array.from({ length: 200 }, (_, i) => ({ name: 'slow', data: {}, opts: { jobId: `b${i}` } })),
  );
  await until(() => done.length === 200, 'the burst', 20_000);
  t.equal(new Set(done).size, 200);
  t.ok((by.get('w1') ?? 0) > 0 && (by.get('w2') ?? 0) > 0, `both workers took jobs: ${[...by]}`);
});

t.test('a delayed job runs when due, and a job added while the workers block is taken', async (t) => {
  const done: string[] = [];
  const queue = await twoWorkers(t, true, done);
  await queue.add('j', {}, { jobId: 'later', delay: 400 });
  await queue.add('j', {}, { jobId: 'now' });
  await until(() => done.includes('now'), 'now');
  t.notOk(done.includes('later'), 'not before its time');
  await until(() => done.includes('later'), 'later');
  await new Promise((r) => setTimeout(r, 200));
  await queue.add('j', {}, { jobId: 'after' });
  await until(() => done.includes('after'), 'after');
  t.strictSame([...done].sort(), ['after', 'later', 'now']);
});

t.test(
  'a BullMQ whose step no longer holds the line changed is refused, naming the file to check',
  async (t) => {
    const changed: BullScript = { name: 'moveToActive', keys: 11, content: 'return 1' };
    t.throws(() => fetchScripts([changed]), /moveToActive no longer re-adds its marker.*fetch-scripts\.ts/);
    const twice: BullScript = { ...changed, content: 'addBaseMarkerIfNeeded(markerKey, false)\n'.repeat(2) };
    t.throws(() => fetchScripts([twice]), /no longer re-adds/);
    const [patched] = fetchScripts([
      { ...changed, content: 'a\naddBaseMarkerIfNeeded(markerKey, false)\nb' },
    ]);
    t.match(
      patched!.lua,
      /if rcall\("LLEN", KEYS\[1\]\) > 0 or rcall\("ZCARD", KEYS\[3\]\) > 0 then addBaseMarkerIfNeeded/,
    );
    t.match(patched!.name, /^moveToActive:\d+\.\d+\.\d+$/);
  },
);
