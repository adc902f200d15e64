// Trailing takes (trailing-takes.ts): the runner that adds a delegation's first child takes its job in
// the same write, right behind the add, and its own worker runs it — while BullMQ's loop still
// blocks on the queue's marker, which the add took away again so that no worker wakes for nothing.
// A job added behind others leaves the marker and the take takes the oldest; a worker that cannot
// take (no free slot, closed) takes nothing; closing the worker waits for a job it took so. And a
// child's completion has the runner take the parent it moves on: right behind, no marker set.
import { keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { FlowProducer, type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { ChildJob } from '../src/loop/steps/child-jobs.js';
import { type Activation, ActivationStore } from '../src/loop/store/activation-store.js';
import {
  COMPLETE_COMMAND,
  defineTrailingTake,
  takeFetchHints,
} from '../src/queue/fast-path/fetch-scripts.js';
import { FinishesInCompletion } from '../src/queue/fast-path/finish-in-completion.js';
import { defineGuardedAdd, queueChildJobs } from '../src/queue/fast-path/guarded-add.js';
import { TrailingTakes } from '../src/queue/fast-path/trailing-takes.js';
import { takingConnection } from './support/taking-connection.js';

const server = await startRedis();
t.teardown(() => server.stop());
const keys = keyLayout('trailing');
let n = 0;

/** A gate a job's processing waits on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

/**
 * A runner's two connections (the store's, with the guarded add and the take; the worker's), the
 * `helper` worker as a runner builds it, and its trailing takes. `hold` keeps a job's processing until
 * its gate opens.
 */
async function setup(t: Test, opts: { concurrency?: number; ready?: () => boolean } = {}) {
  const prefix = `{h${++n}}`;
  const store = new Redis(server.url, { maxRetriesPerRequest: null });
  defineGuardedAdd(store);
  defineTrailingTake(store);
  const { connection, takes } = takingConnection(server.url, 'helper', { keys });
  const queues = new Map(['boss', 'helper'].map((q) => [q, new Queue(q, { connection: store, prefix })]));
  const seen: { id: string; token: string; blocking: boolean }[] = [];
  const hold = new Map<string, ReturnType<typeof gate>>();
  const worker = new Worker(
    'helper',
    async (job: Job, token?: string) => {
      // Whether BullMQ's loop still blocks on the marker as the job runs.
      const blocking = (worker as unknown as { waiting: unknown }).waiting != null;
      seen.push({ id: job.id!, token: token ?? '', blocking });
      await hold.get(job.id!)?.opened;
    },
    // The longest block BullMQ allows: a job the loop had to wake for would wait 10 s.
    { connection, prefix, concurrency: opts.concurrency ?? 4, drainDelay: 10, autorun: false },
  );
  takeFetchHints(worker);
  worker.on('closed', () => connection.disconnect());
  t.teardown(async () => {
    for (const g of hold.values()) g.open();
    await worker.close();
    await Promise.all([...queues.values()].map((q) => q.close()));
    store.disconnect();
  });
  void worker.run();
  await waitUntil(
    async () => (worker as unknown as { waiting: unknown }).waiting != null,
    5000,
    () => 'no block',
  );
  const trailing = new TrailingTakes(worker, takes, opts.ready ?? (() => true));
  const parent = await queues.get('boss')!.add('boss', {}, { jobId: `p${n}` });
  const parentInv = `${prefix}:inv`;
  await store.hset(parentInv, 'epoch', '1');
  const helper = queues.get('helper')!;
  const child = (id: string): ChildJob => ({
    name: 'helper',
    data: { v: 1, invocationId: id, rootId: id, agent: 'helper' },
    opts: { jobId: id, parent: { id: parent.id!, queue: parent.queueQualifiedName } },
  });
  /** Adds `ids` as a submission does, `trailed` taken right behind; the queue's marker count after, and the take's answer. */
  async function submit(ids: string[], trailed?: string, epoch = 1) {
    const p = store.pipeline();
    const activation = { epoch, state: { id: parent.id } } as unknown as Activation;
    queueChildJobs(p, queues, ids.map(child), activation, parentInv, trailed);
    if (trailed) {
      t.ok(trailing.canTake(), 'the worker can take a job');
      trailing.queue(p);
    }
    p.zcard(helper.keys.marker!);
    const replies = (await p.exec())!;
    if (trailed && replies.at(-2)?.[0]) throw replies.at(-2)![0];
    return { marker: replies.at(-1)?.[1] as number, took: trailed ? replies.at(-2)?.[1] : undefined };
  }
  return { worker, helper, trailing, seen, hold, submit };
}

t.test('a trailed job is taken in its add’s write and runs while the worker blocks', async (t) => {
  const { helper, seen, submit } = await setup(t);
  const { marker, took } = await submit(['c1'], 'c1');
  t.equal(marker, 0, 'the add took its marker back: no worker wakes for the job');
  t.equal((took as unknown[])[1], 'c1', 'the take answered with the job');
  await waitUntil(
    async () => (await helper.getJobState('c1')) === 'completed',
    5000,
    () => JSON.stringify(seen),
  );
  t.equal(seen.length, 1);
  t.match(seen[0]!.token, /:h\d+$/, 'processed under the trailing take’s token');
  t.ok(seen[0]!.blocking, 'it ran while BullMQ’s loop was still in its blocking pop');
});

t.test('without the trailing take the add leaves its marker and the worker wakes for the job', async (t) => {
  const { helper, seen, submit } = await setup(t);
  const { marker } = await submit(['c1']);
  // The marker is popped by the blocked worker as soon as the add put it there.
  t.ok(marker <= 1);
  await waitUntil(
    async () => (await helper.getJobState('c1')) === 'completed',
    5000,
    () => JSON.stringify(seen),
  );
  t.notMatch(seen[0]!.token, /:h\d+$/, 'taken by the worker’s own fetch');
});

t.test('a job added behind another keeps the marker, and the take takes the oldest', async (t) => {
  const { helper, seen, hold, submit } = await setup(t, { concurrency: 1 });
  for (const id of ['busy', 'old']) hold.set(id, gate());
  await helper.add('helper', {}, { jobId: 'busy' });
  await waitUntil(
    async () => seen.length === 1,
    5000,
    () => JSON.stringify(seen),
  );
  await helper.add('helper', {}, { jobId: 'old' }); // waits: the worker's one slot is busy
  const { marker, took } = await submit(['new'], 'new');
  t.equal((took as unknown[])[1], 'old', 'the queue’s oldest job was taken');
  t.equal(marker, 1, 'the marker stays for the job still waiting');
  await waitUntil(
    async () => seen.some((s) => s.id === 'old'),
    5000,
    () => JSON.stringify(seen),
  );
  t.match(seen.find((s) => s.id === 'old')!.token, /:h\d+$/);
  hold.get('busy')!.open();
  hold.get('old')!.open();
  await waitUntil(
    async () => (await helper.getJobState('new')) === 'completed',
    15000,
    () => JSON.stringify(seen),
  );
  t.same(seen.map((s) => s.id).sort(), ['busy', 'new', 'old']);
});

t.test('a fenced-out submission adds nothing and the take takes nothing', async (t) => {
  const { helper, submit } = await setup(t);
  const { took } = await submit(['c1'], 'c1', 2);
  t.notOk((took as unknown[])[0], 'no job taken');
  t.equal(await helper.getJob('c1'), undefined, 'no job added');
});

t.test('a worker without a free slot, or closed, takes nothing', async (t) => {
  let free = false;
  const { worker, trailing } = await setup(t, { ready: () => free });
  t.notOk(trailing.canTake(), 'no free slot');
  free = true;
  t.ok(trailing.canTake());
  await worker.close();
  t.notOk(trailing.canTake(), 'closed');
});

t.test('closing the worker waits for a job it took behind a step', async (t) => {
  const { worker, helper, seen, hold, submit } = await setup(t);
  hold.set('c1', gate());
  await submit(['c1'], 'c1');
  await waitUntil(
    async () => seen.length === 1,
    5000,
    () => JSON.stringify(seen),
  );
  let closed = false;
  const closing = worker.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(closed, 'the worker waits for the job it holds');
  hold.get('c1')!.open();
  await closing;
  t.equal(await helper.getJobState('c1'), 'completed');
});

t.test('a child’s completion has the runner take the parent it moves on, with no marker set', async (t) => {
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  const scripts = meshScripts(redis);
  const store = new ActivationStore(redis, scripts, keys, 3600);
  const prefix = `{h${++n}}`;
  const childInv = `inv_${String(n).padStart(32, '0')}`;
  await createRootInvocation(scripts, keys, childInv);
  /** A worker of `agent` on a connection of its own, as a runner builds it. */
  const build = (agent: string, processor: (job: Job, token?: string) => Promise<void>) => {
    const { connection, takes } = takingConnection(server.url, agent, { keys });
    const worker = new Worker(agent, processor, { connection, prefix, drainDelay: 10, autorun: false });
    takeFetchHints(worker);
    worker.on('closed', () => connection.disconnect());
    return { connection, takes, worker };
  };
  const seen: string[] = [];
  const boss = build('boss', async (job, token) => {
    seen.push(`${job.id} ${token}`);
  });
  const bossTakes = new TrailingTakes(boss.worker, boss.takes, () => true);
  const finishes = new FinishesInCompletion();
  const helper = build('helper', async (job) => {
    const a = (await store.activate(childInv, childInv, 'r1'))!;
    const step = store.finishStep(a.state, a.epoch, { status: 'succeeded', output: 'ok', content: 'ok' }, a);
    void finishes.defer(job.id!, step, { parentId: 'parent', takes: bossTakes });
  });
  finishes.attach(helper.connection, COMPLETE_COMMAND.name, COMPLETE_COMMAND.keys);
  const flows = new FlowProducer({ connection: redis, prefix });
  const bossQueue = new Queue('boss', { connection: redis, prefix });
  t.teardown(async () => {
    await Promise.all([boss.worker.close(), helper.worker.close(), flows.close(), bossQueue.close()]);
    redis.disconnect();
  });
  await flows.add({
    name: 'boss',
    queueName: 'boss',
    data: {},
    opts: { jobId: 'parent' },
    children: [{ name: 'helper', queueName: 'helper', data: {}, opts: { jobId: childInv } }],
  });
  const monitor = await monitorRedis(server.port);
  t.teardown(() => monitor.stop());
  void boss.worker.run();
  await waitUntil(
    async () => (boss.worker as unknown as { waiting: unknown }).waiting != null,
    5000,
    () => 'no block',
  );
  void helper.worker.run();
  await waitUntil(
    async () => (await bossQueue.getJobState('parent')) === 'completed',
    5000,
    () => seen.join(),
  );
  t.match(seen, [/^parent .*:h\d+$/], 'the parent was taken by the parent take, right behind the completion');
  t.equal(
    await redis.hget(keys.invocation(childInv, childInv), 'status'),
    'succeeded',
    'the child’s end written',
  );
  const bossMarker = `${prefix}:boss:marker`;
  t.notOk(
    monitor.seen.some((c) => c.args[0]?.toUpperCase() === 'ZADD' && c.args[1] === bossMarker),
    'no marker set on the parent’s queue: no worker woke for it',
  );
});
