// A child's job rides in the pipeline that creates the child, behind BullMQ's own add step guarded
// by the parent's epoch: it is the job BullMQ would add, linked to the parent's job, and an
// activation fenced out (another took the parent over) adds none. Of several children, the first
// and its job go out in a write of their own, ahead of the rest and the park. The parent's job
// parks in the last write (queue/fast-path/guarded-park.ts): waiting for its children, guarded by the epoch as well.
import { type CallRecord, childId, keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { childJobs } from '../src/loop/steps/child-jobs.js';
import { type Activation, ActivationStore, FencedOutError } from '../src/loop/store/activation-store.js';
import { checkChildJobs, defineGuardedAdd, queueChildJobs } from '../src/queue/fast-path/guarded-add.js';
import { defineGuardedPark, queueParkJob } from '../src/queue/fast-path/guarded-park.js';

const keys = keyLayout('childjobs');
let n = 0;

async function setup(t: Test) {
  const server = await startRedis();
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  const scripts = meshScripts(redis);
  defineGuardedAdd(redis);
  defineGuardedPark(redis);
  const store = new ActivationStore(redis, scripts, keys, 3600);
  const queues = new Map(
    ['boss', 'helper'].map((name) => [name, new Queue(name, { connection: redis, prefix: keys.bullPrefix })]),
  );
  t.teardown(async () => {
    await Promise.all([...queues.values()].map((q) => q.close()));
    redis.disconnect();
    await server.stop();
  });
  const id = `inv_${String(++n).padStart(32, '0')}`;
  await createRootInvocation(scripts, keys, id);
  const parentJob = await queues
    .get('boss')!
    .add('boss', { v: 1, invocationId: id, rootId: id, agent: 'boss' }, { jobId: id });
  const activate = async () => (await store.activate(id, id, 'r1'))!;
  const jobsOf = (a: Activation) => childJobs(parentJob, a, [{ name: 'helper', callId: 't0-c0' }], 3600);
  const helperJob = () => queues.get('helper')!.getJob(childId(id, 't0-c0'));
  return { redis, store, queues, id, parentJob, activate, jobsOf, helperJob };
}

const submission = (a: Activation, callId = 't0-c0') => {
  const cid = childId(a.state.id, callId);
  const record: CallRecord = {
    v: 1,
    callId,
    kind: 'subagent',
    name: 'helper',
    status: 'started',
    startedAt: new Date().toISOString(),
    childId: cid,
  };
  return {
    callId,
    record,
    agent: 'helper',
    input: { prompt: 'x' },
    deadline: Date.now() + 60_000,
    defHash: 'h',
  };
};

t.test(
  'the child job rides behind its submission, linked to the parent job as BullMQ links it',
  async (t) => {
    const { redis, store, queues, id, parentJob, activate, jobsOf, helperJob } = await setup(t);
    const a = await activate();
    const replies = await store.submitChildren(a, [submission(a)], {
      park: true,
      behind: (p, inv) => queueChildJobs(p, queues, jobsOf(a), a, inv),
    });
    t.equal(replies.length, 1, 'the add step answered with the submission');
    checkChildJobs(a, replies);
    const job = await helperJob();
    t.ok(job, 'the child job is in its queue');
    t.strictSame(job!.data, { v: 1, invocationId: childId(id, 't0-c0'), rootId: id, agent: 'helper' });
    t.equal(job!.parentKey, `${keys.bullPrefix}:boss:${id}`);
    t.equal(job!.opts.attempts, 3, 'the retry options of every mesh job');
    t.equal(await job!.getState(), 'waiting');
    const deps = await redis.smembers(`${keys.bullPrefix}:boss:${parentJob.id}:dependencies`);
    t.strictSame(deps, [`${keys.bullPrefix}:helper:${job!.id}`], 'the parent waits for it');
    t.equal(
      await redis.hget(keys.invocation(id, childId(id, 't0-c0')), 'status'),
      'queued',
      'its child exists',
    );
  },
);

t.test('an activation fenced out adds no child job; the one holding the parent does', async (t) => {
  const { redis, queues, activate, jobsOf, helperJob } = await setup(t);
  const stale = await activate();
  const current = await activate(); // another activation took the parent over
  const add = async (a: Activation) => {
    const p = redis.pipeline();
    queueChildJobs(p, queues, jobsOf(a), a, keys.invocation(a.state.rootId, a.state.id));
    return (await p.exec()) ?? [];
  };
  t.throws(() => checkChildJobs(stale, [[null, -9001]]), FencedOutError);
  const refused = await add(stale);
  t.throws(() => checkChildJobs(stale, refused), FencedOutError, 'the guard refused it');
  t.equal(await helperJob(), undefined, 'no job was added');
  checkChildJobs(current, await add(current));
  t.ok(await helperJob(), 'added under the epoch that holds the parent');
  // A second add of the same job (a re-run after a crash) is BullMQ's no-op, not an error.
  checkChildJobs(current, await add(current));
  t.equal((await queues.get('helper')!.getJobCounts('waiting')).waiting, 1);
});

t.test(
  'the first of several children goes out alone with its job; the rest and the park follow',
  async (t) => {
    const { redis, store, queues, id, parentJob, activate } = await setup(t);
    const calls = ['t0-c0', 't0-c1', 't0-c2'].map((callId) => ({ name: 'helper', callId }));
    const writes: number[] = [];
    const pipeline = redis.pipeline.bind(redis);
    redis.pipeline = ((...args: Parameters<typeof pipeline>) => {
      const p = pipeline(...args);
      const exec = p.exec.bind(p);
      p.exec = (...e: Parameters<typeof exec>) => {
        writes.push(p.length);
        return exec(...e);
      };
      return p;
    }) as typeof redis.pipeline;
    const submit = async (a: Activation) => {
      const jobs = childJobs(parentJob, a, calls, 3600);
      return store.submitChildren(
        a,
        calls.map((c) => submission(a, c.callId)),
        {
          park: true,
          behind: (p, inv, part) =>
            queueChildJobs(
              p,
              queues,
              jobs.filter((_, i) => part.callIds.has(calls[i]!.callId)),
              a,
              inv,
            ),
        },
      );
    };
    const stale = await activate();
    const a = await activate(); // the parent taken over: `stale` is fenced out
    await t.rejects(submit(stale), FencedOutError, 'fenced out in every write');
    t.equal((await queues.get('helper')!.getJobCounts('waiting')).waiting, 0, 'and no job added');
    writes.length = 0;
    const replies = await submit(a);
    t.strictSame(writes, [2, 5], 'child 0 and its job; children 1–2, the park and their jobs');
    t.equal(replies.length, 3, "every job step's reply, in order");
    checkChildJobs(a, replies);
    for (const c of calls) {
      t.equal(await redis.hget(keys.invocation(id, childId(id, c.callId)), 'status'), 'queued');
      t.ok(await queues.get('helper')!.getJob(childId(id, c.callId)), `the job of ${c.callId}`);
    }
    t.equal(await redis.hget(keys.invocation(id, id), 'status'), 'waiting', 'parked in the last write');
  },
);

t.test("the parent's job parks in the submission's last write, behind its children's jobs", async (t) => {
  const { redis, queues, id, parentJob, activate, jobsOf } = await setup(t);
  // The parent's job taken as a worker takes it: held with a token.
  const worker = new Worker('boss', null, { connection: redis, prefix: keys.bullPrefix });
  t.teardown(() => worker.close());
  const held = (await worker.getNextJob('tok-1', { block: false }))!;
  t.equal(held.id, parentJob.id);
  const inv = keys.invocation(id, id);
  /** A write of the steps `queue` puts on it, with the park last; the park's answer. */
  const write = async (a: Activation, token: string, queue: (p: object) => void = () => undefined) => {
    const p = redis.pipeline();
    queue(p);
    const parked = queueParkJob(p, held, token, a, inv);
    await p.exec();
    return parked;
  };
  const stale = await activate();
  const a = await activate(); // `stale` is fenced out
  await t.rejects(write(stale, 'tok-1'), FencedOutError, 'a fenced-out activation parks nothing');
  t.equal(await held.getState(), 'active');
  t.equal(await write(a, 'tok-1'), false, 'no child pending: the job stays active');
  t.equal(await held.getState(), 'active');
  await t.rejects(
    write(a, 'tok-2', (p) => queueChildJobs(p, queues, jobsOf(a), a, inv)),
    /lock/i,
    'a job whose lock is not the token’s is not moved (BullMQ’s own error)',
  );
  t.equal(await held.getState(), 'active');
  t.equal(await write(a, 'tok-1'), true, 'behind its child’s job: it waits for it');
  t.equal(await held.getState(), 'waiting-children');
  t.equal(await redis.exists(`${keys.bullPrefix}:boss:${held.id}:lock`), 0, 'its lock released');
});
