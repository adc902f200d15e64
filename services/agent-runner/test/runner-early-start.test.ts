// A job the take activated starts as soon as its take answered, not once BullMQ's worker has
// fetched all it may: with several jobs waiting, the first runs while the worker fetches the next.
// The early start is BullMQ's own processing of that take (one run per job, its lock renewed from
// the start, its failure the job's); a job the take did not activate starts where BullMQ starts it.
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { EarlyStarts } from '../src/queue/fast-path/early-start.js';

const redis = await startRedis();
t.teardown(() => redis.stop());
let prefixes = 0;

interface Trial {
  queue: Queue;
  /** What happened, in order: `fetched <n>` (a fetch answered, n jobs so far), `start <id>`. */
  seen: string[];
  starts: Map<string, number>;
  signals: Map<string, AbortSignal | undefined>;
}

/**
 * One worker (concurrency 8) whose jobs start early when `early` says so; a run of job `fail`
 * throws. With `slow`, each fetch after the first takes `fetchMs` more and each run `runMs`, under
 * a lock of `lockMs`.
 */
async function trial(
  t: Test,
  early: (id: string) => boolean,
  jobs: string[],
  slow?: { fetchMs: number; runMs: number; lockMs: number },
): Promise<Trial & { errors: string[] }> {
  const prefix = `e${prefixes++}`;
  const seen: string[] = [];
  const starts = new Map<string, number>();
  const signals = new Map<string, AbortSignal | undefined>();
  const errors: string[] = [];
  const run = async (job: Job, signal: AbortSignal | undefined) => {
    const id = job.id!;
    seen.push(`start ${id}`);
    starts.set(id, (starts.get(id) ?? 0) + 1);
    signals.set(id, signal);
    await new Promise((r) => setTimeout(r, slow?.runMs ?? 5));
    if (id === 'fail') throw new Error('the run failed');
  };
  const queue = new Queue('early', { connection: { port: redis.port }, prefix });
  t.teardown(() => queue.close());
  // The jobs wait before the worker starts: its first fetches find them all.
  for (const id of jobs) await queue.add('j', {}, { jobId: id, attempts: 1 });
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const worker = new Worker('early', (job, _token, signal) => run(job, signal), {
    connection,
    concurrency: 8,
    prefix,
    autorun: false,
    ...(slow ? { lockDuration: slow.lockMs, stalledInterval: slow.lockMs } : {}),
  });
  const fetching = worker as unknown as { moveToActive(token: string, name?: string): Promise<unknown> };
  const moveToActive = fetching.moveToActive.bind(worker);
  let fetched = 0;
  fetching.moveToActive = async (token, name) => {
    if (slow && fetched > 0) await new Promise((r) => setTimeout(r, slow.fetchMs));
    const job = await moveToActive(token, name);
    if (job) seen.push(`fetched ${++fetched}`);
    return job;
  };
  new EarlyStarts().attach(worker, early);
  worker.on('error', (e) => errors.push(e.message));
  worker.on('closed', () => connection.disconnect());
  t.teardown(() => worker.close());
  void worker.run();
  await waitUntil(
    async () => starts.size === jobs.length,
    5000,
    () => `runs: ${seen.join(', ')}`,
  );
  return { queue, seen, starts, signals, errors };
}

t.test('the first job runs while the worker fetches the next', async (t) => {
  const { seen, starts } = await trial(t, () => true, ['a', 'b', 'c']);
  // Without early starts BullMQ fetches all three before it starts any. With them, on a quick
  // machine job a may even have ended and its completion taken job c (BullMQ's fetch of the next
  // job in its completion step), so that no third fetch finds one: a ran first all the same.
  const third = seen.includes('fetched 3') ? seen.indexOf('fetched 3') : seen.length;
  t.ok(seen.indexOf('start a') < third, `job a starts before the third job is taken: ${seen.join(', ')}`);
  t.same([...starts.values()], [1, 1, 1], 'each job runs once: the processor call joins its run');
});

t.test('a job its take did not activate starts at the processor call, as BullMQ starts it', async (t) => {
  const { seen, starts } = await trial(t, () => false, ['a', 'b', 'c']);
  t.ok(seen.indexOf('start a') > seen.indexOf('fetched 3'), `fetches first: ${seen.join(', ')}`);
  t.same([...starts.values()], [1, 1, 1]);
});

t.test("the processor's lock signal reaches the run; a run's failure is the job's", async (t) => {
  const { queue, signals } = await trial(t, () => true, ['ok', 'fail']);
  await waitUntil(
    async () =>
      (await queue.getJobState('fail')) === 'failed' && (await queue.getJobState('ok')) === 'completed',
    5000,
    () => 'the jobs settle',
  );
  t.equal((await queue.getJob('fail'))?.failedReason, 'the run failed');
  t.ok(signals.get('ok') instanceof AbortSignal, "BullMQ's signal was linked to the early run");
});

t.test('an early start renews its lock while BullMQ still fetches, and completes with it', async (t) => {
  // The worker's loop gets to job a only after its fetches (two of 1 s), past a's 1 s lock; a's run
  // outlasts its lock by half and ends before then.
  const { queue, starts, errors } = await trial(t, () => true, ['a', 'b', 'c'], {
    fetchMs: 1000,
    runMs: 1500,
    lockMs: 1000,
  });
  await waitUntil(
    async () => (await queue.getJobCounts('completed')).completed === 3,
    15_000,
    () => `the jobs complete; errors: ${errors.join('; ')}`,
  );
  t.same([...starts.values()], [1, 1, 1], 'each job ran once');
  t.same(errors, [], 'no lock was lost or missing');
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const events = await client.xrange(queue.keys.events!, '-', '+');
  t.notOk(
    events.some(([, fields]) => fields[1] === 'stalled'),
    "BullMQ's stalled check moved no job",
  );
});
