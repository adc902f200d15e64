// Activation in the take (take-activation.ts): on one Redis server the worker's fetch steps run
// ACTIVATE for the job they take, in the same step, and the processor gets its reply. What the take
// must not activate (no free slot, another agent's job, unknown data) is left to the processor,
// a gone invocation answers null, and a failure inside ACTIVATE reaches the processor.
import { keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { TakenActivation } from '../src/loop/fast-path-ports.js';
import { ActivationStore } from '../src/loop/store/activation-store.js';
import { TakenActivations } from '../src/queue/fast-path/take-activation.js';
import { takingConnection } from './support/taking-connection.js';

const server = await startRedis();
t.teardown(() => server.stop());
const redis = new Redis(server.url, { maxRetriesPerRequest: null });
t.teardown(() => redis.disconnect());
const keys = keyLayout('taketest');
const scripts = meshScripts(redis);
const store = new ActivationStore(redis, scripts, keys, 3600);
const react = { firstCallId: 't0-model', model: 'default', defHash: 'x', inputSchema: false };
let n = 0;

/** Creates a root invocation of `solo`, as the gateway does. */
async function create(): Promise<string> {
  const id = `inv_${String(++n).padStart(32, '0')}`;
  await createRootInvocation(scripts, keys, id);
  return id;
}

const job = (id: string, data: Record<string, unknown> = {}) => ({
  name: 'solo',
  data: { v: 1, invocationId: id, rootId: id, agent: 'solo', ...data },
  opts: { jobId: id },
});

/** A worker of `solo`'s queue as a runner builds it; each job's taken activation, by job id. */
async function worker(t: Test, opts: { ready?: () => boolean; concurrency?: number; holdMs?: number } = {}) {
  const prefix = `{q${++n}}`;
  const { connection, takes } = takingConnection(server.url, 'solo', { keys, react, ready: opts.ready });
  const taken = new Map<string, TakenActivation | undefined>();
  const queue = new Queue('agent-solo', { connection: redis, prefix });
  const w = new Worker(
    'agent-solo',
    async (j) => {
      taken.set(j.id!, takes.take(j.id));
      if (opts.holdMs) await new Promise((r) => setTimeout(r, opts.holdMs));
    },
    { connection, prefix, concurrency: opts.concurrency ?? 4, autorun: false },
  );
  t.teardown(async () => {
    await w.close();
    await queue.close();
    connection.disconnect();
  });
  const until = (ids: string[]) =>
    waitUntil(
      async () => ids.every((id) => taken.has(id)),
      5000,
      () => `jobs ${ids} taken`,
    );
  return { queue, w, taken, until };
}

t.test('the take of a job activates its invocation in the same step, model call started', async (t) => {
  const { queue, w, taken, until } = await worker(t);
  const id = await create();
  const monitor = await monitorRedis(server.port);
  t.teardown(() => monitor.stop());
  void w.run();
  await queue.add(job(id).name, job(id).data, job(id).opts);
  await until([id]);
  const a = store.taken(taken.get(id) as TakenActivation)!;
  t.match(a, { epoch: 1, recovered: false, prestarted: 't0-model' });
  t.match(a.state, { id, status: 'running' });
  t.equal(await redis.hget(keys.invocation(id, id), 'runner'), 'r1');
  t.match(JSON.parse((await redis.hget(keys.calls(id, id), 't0-model'))!), {
    kind: 'model',
    name: 'default',
    status: 'started',
    runner: 'r1',
  });
  const events = await redis.xrange(keys.events(id), '-', '+');
  t.match(JSON.parse(events.at(-1)![1][1]!), { type: 'status', data: { status: 'running' } });
  const activates = monitor.seen.filter(
    (c: MonitoredCommand) =>
      c.source !== 'lua' && c.args[0] === 'evalsha' && c.args[3] === keys.invocation(id, id),
  );
  t.equal(activates.length, 0, 'no step of its own: the take ran it');
  // Taken once: the processor's second look finds nothing (an activation is never reused).
  t.equal(new TakenActivations().take(id), undefined);
});

t.test('a job the next fetch takes (moveToFinished) carries its activation too', async (t) => {
  const { queue, w, taken, until } = await worker(t, { concurrency: 1 });
  const first = await create();
  const second = await create();
  await queue.addBulk([job(first), job(second)]);
  void w.run();
  await until([first, second]);
  for (const id of [first, second]) t.match(store.taken(taken.get(id) as TakenActivation), { epoch: 1 });
});

t.test('with no free slot, another agent or unknown data, the processor activates', async (t) => {
  let ready = false;
  const { queue, w, taken, until } = await worker(t, { ready: () => ready });
  const [busy, other, unknown] = [await create(), await create(), await create()];
  void w.run();
  await queue.add('solo', job(busy).data, job(busy).opts);
  await until([busy]);
  ready = true;
  await queue.add('solo', job(other, { agent: 'other' }).data, job(other).opts);
  await queue.add('solo', job(unknown, { v: 2 }).data, job(unknown).opts);
  await until([other, unknown]);
  for (const id of [busy, other, unknown]) {
    t.equal(taken.get(id), undefined, id);
    t.equal(await redis.hget(keys.invocation(id, id), 'status'), 'queued', 'not activated');
  }
});

t.test('an invocation that is gone answers null; a failing ACTIVATE fails the processor', async (t) => {
  const { queue, w, taken, until } = await worker(t);
  const gone = 'inv_gone';
  const broken = await create();
  await redis.del(keys.invocation(broken, broken));
  await redis.set(keys.invocation(broken, broken), 'not a hash'); // HGET fails: WRONGTYPE
  void w.run();
  await queue.addBulk([job(gone), job(broken)]);
  await until([gone, broken]);
  t.equal(taken.get(gone), null);
  t.equal(store.taken(null), undefined, 'gone: nothing to do');
  t.throws(
    () => store.taken(taken.get(broken) as TakenActivation),
    /ACTIVATE in the take of the job failed: .*WRONGTYPE/,
  );
});

t.test('a key layout a take cannot fill is refused when the worker is built', async (t) => {
  const bad = { ...keys, invocation: (root: string) => `x:{${root}}:inv` };
  t.throws(
    () =>
      new TakenActivations().attach({ moveToActive: () => undefined }, ['moveToActive'], {
        agent: 'solo',
        runner: 'r1',
        keys: bad,
        react: undefined,
        ready: () => true,
      }),
    /must hold the root id once, then the invocation id once/,
  );
  t.throws(
    () =>
      new TakenActivations().attach({}, ['moveToActive'], {
        agent: 'solo',
        runner: 'r1',
        keys,
        react: undefined,
        ready: () => true,
      }),
    /moveToActive is not defined/,
  );
});
