// The runner's fetch steps (BullMQ's, changed where a job is taken) and the hint its workers take:
// an idle worker is not woken by a job another worker takes, the taker blocks at once when the
// queue is empty, and nothing BullMQ's marker or its extra fetch is for is lost — a burst spread
// over workers, a delayed job due while its worker took another.
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Queue, WaitingChildrenError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import {
  type BullScript,
  defineFetchScripts,
  fetchScripts,
  takeFetchHints,
} from '../src/queue/fast-path/fetch-scripts.js';

const redis = await startRedis();
t.teardown(() => redis.stop());
const admin = new Redis(redis.url);
t.teardown(() => admin.disconnect());
const QUEUE = 'fetch';
let prefixes = 0;

const until = (check: () => boolean, what: string, ms = 5000) =>
  waitUntil(
    async () => check(),
    ms,
    () => what,
  );

/** BullMQ's own steps; the changed steps alone; the changed steps and the hint (the runner's). */
type Mode = 'bullmq' | 'steps' | 'hints';

/** Workers on one queue (a fresh prefix), each on its own connection, as runners would be. */
async function workers(t: Test, mode: Mode, names: string[], done: string[], by = new Map<string, number>()) {
  const prefix = `p${prefixes++}`;
  const all = names.map((name) => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    if (mode !== 'bullmq') defineFetchScripts(connection);
    const worker = new Worker(
      QUEUE,
      async (job, token) => {
        done.push(`${job.id}`);
        by.set(name, (by.get(name) ?? 0) + 1);
        if (job.name === 'slow') await new Promise((r) => setTimeout(r, 20));
        // A parent that delegates: its child goes to a queue no worker serves, and it parks.
        if (job.name === 'park') {
          const kids = new Queue('kids', { connection: { port: redis.port }, prefix });
          const parent = { id: job.id!, queue: job.queueQualifiedName };
          await kids.add('kid', {}, { jobId: `kid-${job.id}`, parent });
          await kids.close();
          if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
        }
      },
      { connection, name, concurrency: 8, prefix },
    );
    if (mode === 'hints') takeFetchHints(worker);
    worker.on('closed', () => connection.disconnect());
    return worker;
  });
  t.teardown(() => Promise.all(all.map((w) => w.close())));
  await Promise.all(all.map((w) => w.waitUntilReady()));
  const queue = new Queue(QUEUE, { connection: { port: redis.port }, prefix });
  t.teardown(() => queue.close());
  // Each has fetched once, found nothing and blocks on the marker (BullMQ names its connections
  // `<prefix>:<queue>…`; a worker blocks on one of its two).
  await waitUntil(
    async () =>
      String(await admin.call('CLIENT', 'LIST', 'TYPE', 'normal'))
        .split('\n')
        .filter(
          (c) => c.includes(` name=${prefix}:`) && c.includes(' flags=b ') && c.includes(' cmd=bzpopmin'),
        ).length === names.length,
    5000,
    () => `${names.join(', ')} to block on the marker`,
  );
  return queue;
}

/** The fetches (moveToActive) and blocking pops one job costs, and the clients that sent them. */
async function oneJob(t: Test, mode: Mode, name = 'j') {
  const done: string[] = [];
  const queue = await workers(t, mode, ['w1', 'w2'], done);
  const monitor = await monitorRedis(redis.port);
  await queue.add(name, {}, { jobId: 'one' });
  await until(() => done.length === 1, 'the job');
  await new Promise((r) => setTimeout(r, 300)); // the fetches that follow the job
  monitor.stop();
  const sent = monitor.seen.filter((c: MonitoredCommand) => c.source !== 'lua');
  const active = sent.filter(
    (c) => c.args[0] === 'evalsha' && c.args[2] === '11' && c.args[3]?.endsWith(':wait'),
  );
  const pops = sent.filter((c) => c.args[0]?.toLowerCase() === 'bzpopmin');
  return {
    active: active.length,
    pops: pops.length,
    clients: new Set([...active, ...pops].map((c) => c.source)).size,
  };
}

t.test(
  'the runner takes a job from an idle queue with one fetch, then blocks; no other worker wakes',
  async (t) => {
    t.strictSame(
      await oneJob(t, 'hints'),
      { active: 1, pops: 1, clients: 2 },
      "one worker's two connections",
    );
  },
);

t.test(
  'a worker that does not take the hint fetches once more, as BullMQ does, still waking no other',
  async (t) => {
    t.strictSame(await oneJob(t, 'steps'), { active: 2, pops: 1, clients: 2 });
  },
);

t.test("BullMQ's own steps, for contrast: the other worker wakes too, and the taker twice", async (t) => {
  const stock = await oneJob(t, 'bullmq');
  t.ok(stock.active >= 3 && stock.clients >= 3, JSON.stringify(stock));
});

t.test('a job that parks costs its worker no fetch but the take while it blocks on the marker', async (t) => {
  t.strictSame(await oneJob(t, 'hints', 'park'), { active: 1, pops: 1, clients: 2 });
  // Without the hint BullMQ fetches after the take and again after the park, both finding nothing.
  t.strictSame(await oneJob(t, 'steps', 'park'), { active: 3, pops: 1, clients: 2 });
});

t.test('a burst is spread over the workers: the marker stays while jobs wait', async (t) => {
  const done: string[] = [];
  const by = new Map<string, number>();
  const queue = await workers(t, 'hints', ['w1', 'w2'], done, by);
  await queue.addBulk(
    Array.from({ length: 200 }, (_, i) => ({ name: 'slow', data: {}, opts: { jobId: `b${i}` } })),
  );
  await until(() => done.length === 200, 'the burst', 20_000);
  t.equal(new Set(done).size, 200);
  t.ok((by.get('w1') ?? 0) > 0 && (by.get('w2') ?? 0) > 0, `both workers took jobs: ${[...by]}`);
});

t.test('a delayed job runs when due although its worker took another job meanwhile', async (t) => {
  // The worker learns the delayed job's time from its marker, then takes `now`: the hint with it
  // carries that time, or the worker would block for BullMQ's drain delay (5 s) and run it late.
  const done: string[] = [];
  const queue = await workers(t, 'hints', ['w1'], done);
  const added = Date.now();
  await queue.add('j', {}, { jobId: 'later', delay: 1000 });
  await new Promise((r) => setTimeout(r, 200));
  await queue.add('j', {}, { jobId: 'now' });
  await until(() => done.includes('now'), 'now');
  t.notOk(done.includes('later'), 'not before its time');
  await until(() => done.includes('later'), 'later', 3000);
  t.ok(Date.now() - added < 3000, `ran ${Date.now() - added} ms after it was added, due at 1000`);
  await queue.add('j', {}, { jobId: 'after' });
  await until(() => done.includes('after'), 'after');
  t.strictSame([...done].sort(), ['after', 'later', 'now']);
});

t.test(
  'a BullMQ whose steps no longer hold the lines changed is refused, naming the file to check',
  async (t) => {
    const step = (content: string): BullScript => ({ name: 'moveToActive', keys: 11, content });
    const marker = 'addBaseMarkerIfNeeded(markerKey, false)';
    const answer = 'return {rcall("HGETALL", jobKey), jobId, 0, 0}';
    t.throws(
      () => fetchScripts([step('return 1')]),
      /moveToActive no longer holds "addBase.*fetch-scripts\.ts/,
    );
    t.throws(() => fetchScripts([step(`${marker}\n${marker}\n${answer}`)]), /no longer holds "addBase/);
    t.throws(() => fetchScripts([step(`${marker}\nreturn {}`)]), /no longer holds "return \{rcall/);
    const [changed] = fetchScripts([step(`a\n  ${marker}\n  ${answer}\nb`)]);
    t.match(changed!.lua, /if meshMore then addBaseMarkerIfNeeded\(markerKey, false\) end/);
    t.match(changed!.lua, /meshMore and 0 or -\(getNextDelayedTimestamp\(KEYS\[7\]\) or 1\)/);
    t.match(changed!.name, /^moveToActive:\d+\.\d+\.\d+$/);
  },
);
