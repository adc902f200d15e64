// A job dispatched (shared queue/dispatch.ts, dispatched-takes.ts): a worker that blocks on its queue
// with a slot free registers, and the add that queues a job takes it for that worker — lock, token,
// `pb`, and the activation of the job's invocation — and delivers it through the inbox the block
// also watches: the worker runs it without a take of its own, and no other worker wakes. A worker
// whose block lapsed, that has no free slot, that was woken by the marker, or whose runner withdrew
// is dispatched nothing: the job waits for a take, as BullMQ's add leaves it.
import { dispatchKeys, keyLayout } from '@agentmesh/shared';
import { defineDispatchingAdd } from '@agentmesh/shared/queue/fast-path';
import { meshScripts } from '@agentmesh/shared/redis';
import { monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { DispatchedTakes, withdrawDispatches } from '../src/queue/fast-path/dispatched-takes.js';
import { takeFetchHints } from '../src/queue/fast-path/fetch-scripts.js';
import { takingConnection } from './support/taking-connection.js';

const server = await startRedis();
t.teardown(() => server.stop());
const keys = keyLayout('dispatch');
let n = 0;

/**
 * A gateway's connection with the dispatching add and its queue, and a worker of runner `r1` as a
 * runner builds it (its takes activate, its blocks take dispatches), running once it blocks.
 */
async function setup(t: Test, opts: { ready?: () => boolean } = {}) {
  const prefix = `{d${++n}}`;
  const gateway = new Redis(server.url, { maxRetriesPerRequest: null });
  defineDispatchingAdd(gateway);
  const queue = new Queue('solo', { connection: gateway, prefix });
  const { connection, takes } = takingConnection(server.url, 'solo', { keys });
  const seen: { id: string; token: string; pb: string | null }[] = [];
  const worker = new Worker(
    'solo',
    async (job: Job, token?: string) => {
      seen.push({ id: job.id!, token: token ?? '', pb: await gateway.hget(queue.toKey(job.id!), 'pb') });
    },
    // The longest block BullMQ allows: a job the worker had to wake for by the marker is taken too.
    { connection, prefix, concurrency: 4, drainDelay: 10, autorun: false, name: 'r1' },
  );
  takeFetchHints(worker);
  const ready = opts.ready ?? (() => true);
  const dispatched = new DispatchedTakes(worker, takes, {
    runner: 'r1',
    queueKey: queue.toKey(''),
    lockDurationMs: 30_000,
    ready,
  });
  await dispatched.attach();
  worker.on('closed', () => connection.disconnect());
  t.teardown(async () => {
    await worker.close();
    await queue.close();
    gateway.disconnect();
  });
  void worker.run();
  const blocked = dispatchKeys.blocked(queue.toKey(''));
  await waitUntil(
    async () => (worker as unknown as { waiting: unknown }).waiting != null,
    5000,
    () => 'no block',
  );
  /** Until the worker is registered as blocked. */
  const registered = () =>
    waitUntil(
      async () => (await gateway.zscore(blocked, 'r1')) !== null,
      5000,
      () => 'no registration',
    );
  /** Adds a plain job `id` and waits until the worker has run it: the `n`th job run. */
  const addAndRun = async (id: string, n: number) => {
    await queue.add('solo', {}, { jobId: id });
    await waitUntil(
      async () => seen.length === n,
      15_000,
      () => `${id} not run`,
    );
  };
  return { gateway, queue, worker, seen, blocked, prefix, registered, addAndRun };
}

t.test(
  'a job added while the worker blocks is dispatched to it, taken and activated in the add',
  async (t) => {
    const { gateway, queue, seen, registered } = await setup(t);
    await registered();
    const scripts = meshScripts(gateway);
    await createRootInvocation(scripts, keys, 'inv_a');
    const watch = await monitorRedis(server.port);
    await queue.add(
      'solo',
      { v: 1, invocationId: 'inv_a', rootId: 'inv_a', agent: 'solo' },
      { jobId: 'inv_a' },
    );
    await waitUntil(
      async () => seen.length === 1,
      5000,
      () => 'not run',
    );
    await waitUntil(
      async () => watch.seen.filter((c) => c.args[0]?.toLowerCase() === 'bzpopmin').length > 0,
      5000,
      () => 'no block seen after the job',
    );
    watch.stop();
    t.match(seen[0], { id: 'inv_a', token: /^r1:d:/, pb: 'r1' }, 'run with the dispatch token, taken by r1');
    t.equal(
      await gateway.hget(keys.invocation('inv_a', 'inv_a'), 'status'),
      'running',
      'activated in the add',
    );
    t.equal(await gateway.hget(keys.invocation('inv_a', 'inv_a'), 'runner'), 'r1');
    t.equal(await gateway.zcard(queue.toKey('marker')), 0, 'no marker left to wake anyone');
    // BullMQ's steps by their key count (EVALSHA, or EVAL the first time): add 9, take 11.
    const steps = (keyCount: string) =>
      watch.seen.filter(
        (c) => c.source !== 'lua' && /^eval(sha)?$/i.test(c.args[0]!) && c.args[2] === keyCount,
      );
    t.equal(steps('9').length, 1, 'the add');
    t.equal(steps('11').length, 0, 'and no take of the worker');
    const inbox = dispatchKeys.inbox(queue.toKey(''), 'r1');
    t.ok(
      watch.seen.some((c) => c.args[0]?.toLowerCase() === 'bzpopmin' && c.args.includes(inbox)),
      'its next block watches the inbox',
    );
    t.equal(await gateway.exists(inbox), 0, 'and the answer left it: nothing stays behind');
  },
);

t.test('a lapsed registration, a worker with no free slot and a withdrawn runner get nothing', async (t) => {
  let free = true;
  const { gateway, queue, seen, blocked, worker, registered, addAndRun } = await setup(t, {
    ready: () => free,
  });
  await registered();
  // Lapsed: its score (when the block ends, by Redis's clock) is past.
  await gateway.zadd(blocked, 1, 'r1');
  await addAndRun('lapsed', 1);
  t.notMatch(seen[0]!.token, /:d:/, 'taken by the worker itself, woken by the marker');
  // No free slot: it blocks again without registering.
  free = false;
  await addAndRun('kick', 2); // ends its block, so its next one is unregistered
  await new Promise((r) => setTimeout(r, 100));
  t.equal(await gateway.zscore(blocked, 'r1'), null, 'not registered without a free slot');
  free = true;
  await addAndRun('free-again', 3); // its next block registers
  await registered();
  await withdrawDispatches(gateway, [worker], 'r1');
  t.equal(await gateway.hget(dispatchKeys.offers(queue.toKey('')), 'r1'), null, 'its offer is gone');
  await addAndRun('withdrawn', 4);
  t.notMatch(seen[3]!.token, /:d:/, 'a withdrawn runner is dispatched nothing');
});
