// Stock BullMQ (the queue fast path off): a worker takes jobs one after another while any wait, up
// to its concurrency, before it processes the first, and renews a lock only from the processor call.
// TakenLocks renews each taken job's lock from BullMQ's `active` event until that call, so the
// first job of a long burst keeps its lock. Told by BullMQ's state and events, not by timing.
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { TakenLocks } from '../src/queue/taken-lock.js';

const redis = await startRedis();
t.teardown(() => redis.stop());
let prefixes = 0;
// The two bursts share nothing (a prefix, a worker and its connection each): they run at once.
t.jobs = 2;

/**
 * Three jobs taken by one worker whose fetches of the second and third take 1 s each, under 1 s
 * locks: the first job waits twice its lock for its processor call.
 */
async function burst(t: Test, renew: boolean) {
  const prefix = `l${prefixes++}`;
  const lockMs = 1000;
  const queue = new Queue('burst', { connection: { port: redis.port }, prefix });
  t.teardown(() => queue.close());
  for (const id of ['a', 'b', 'c']) await queue.add('j', {}, { jobId: id, attempts: 1 });
  const locks = renew ? new TakenLocks(lockMs) : undefined;
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    'burst',
    async (job, token) => {
      locks?.processing(job, token ?? '');
      await new Promise((r) => setTimeout(r, 200));
    },
    { connection, concurrency: 8, prefix, autorun: false, lockDuration: lockMs, stalledInterval: lockMs },
  );
  const fetching = worker as unknown as { moveToActive(token: string, name?: string): Promise<unknown> };
  const moveToActive = fetching.moveToActive.bind(worker);
  let fetches = 0;
  fetching.moveToActive = async (token, name) => {
    // The second and third fetches take b and c; the fourth finds the queue empty, and need not wait.
    if (++fetches === 2 || fetches === 3) await new Promise((r) => setTimeout(r, lockMs));
    return moveToActive(token, name);
  };
  locks?.attach(worker);
  const errors: string[] = [];
  worker.on('error', (e) => errors.push(e.message));
  worker.on('closed', () => connection.disconnect());
  t.teardown(() => worker.close());
  void worker.run();
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const stalled = async () =>
    (await client.xrange(queue.keys.events!, '-', '+')).filter(([, f]) => f[1] === 'stalled').length;
  // Renewed, every job completes; not, a lock is lost (an error, or a job the stalled check moved).
  await waitUntil(
    async () =>
      renew
        ? (await queue.getJobCounts('completed')).completed === 3
        : errors.length > 0 || (await stalled()) > 0,
    20_000,
    () => `the jobs to ${renew ? 'complete' : 'lose a lock'}; errors: ${errors.join('; ')}`,
  );
  return { errors, stalled: await stalled() };
}

t.test('a taken job keeps its lock until its processor call, and completes with it', async (t) => {
  const { errors, stalled } = await burst(t, true);
  t.same(errors, [], 'no lock was missing');
  t.equal(stalled, 0, "BullMQ's stalled check moved no job");
});

t.test('without it, the first job of the burst loses its lock (what TakenLocks is for)', async (t) => {
  const { errors, stalled } = await burst(t, false);
  t.ok(errors.length > 0 || stalled > 0, `a lock was lost: ${errors.join('; ')} (${stalled} stalled)`);
});
