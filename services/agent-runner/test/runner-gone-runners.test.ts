// The gone-runner watch (gone-runners.ts): a runner of the mesh's set with no Redis connection
// left has its active jobs moved back to their queue through BullMQ's own stalled check, long
// before their locks (60 s here) would lapse; a runner with a connection open keeps its jobs.
// One watch looks at a time (a lease); one that takes a lapsed lease counts its holder gone since
// its last renewal. Where names or CLIENT LIST are refused, or right after its connection came
// back, the watch judges nobody.
import { type KeyLayout, keyLayout, type Logger, runnerClientName } from '@agentmesh/shared';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { GoneRunnerWatch, type GoneRunnerWatchOptions } from '../src/queue/fast-path/gone-runners.js';

const server = await startRedis();
t.teardown(() => server.stop());
const redis = new Redis(server.url);
t.teardown(() => redis.disconnect());
let n = 0;

interface Logged {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A mesh of its own (prefix), its `work` queue, and runners that take jobs as a runner's workers do. */
async function setup(t: Test) {
  const keys: KeyLayout = keyLayout(`gone${++n}`);
  const queue = new Queue('agent-work', { connection: redis, prefix: keys.bullPrefix });
  const logged: Logged[] = [];
  const record = (level: string) => (obj: object, msg?: string) =>
    void logged.push({ level, obj: obj as Record<string, unknown>, msg });
  const log = { debug() {}, info: record('info'), warn: record('warn'), error: record('error') } as Logger;
  const reclaimed: number[] = [];
  const gone: string[] = [];
  const state = (job: Job) => queue.getJobState(job.id!);
  const closers: (() => Promise<unknown>)[] = [];
  t.teardown(async () => {
    for (const close of closers.reverse()) await close();
    await queue.close();
  });

  /** A watch of runner `id`, ticked by hand (no timer). */
  const watch = (id: string, extra: Partial<GoneRunnerWatchOptions> = {}) => {
    const w = new GoneRunnerWatch({
      redis: { url: extra.redis?.url ?? server.url },
      keys,
      runnerId: id,
      queues: new Map([['work', queue]]),
      stalled: { maxStalledCount: 2, stalledInterval: 30_000 },
      settleMs: 0,
      log,
      onReclaimed: (jobs, id) => {
        reclaimed.push(jobs);
        gone.push(id);
      },
      // The runner's default. Looks happen only when a test ticks, so what a test sees within the
      // grace (one look since the runner went) does not depend on how long the grace is.
      graceMs: 500,
      ...extra,
    });
    closers.push(() => w.stop());
    return w;
  };

  /** Ticks `w` until `job` is back in wait. */
  const untilWaiting = (w: GoneRunnerWatch, job: Job) =>
    waitUntil(
      async () => {
        await w.tick();
        return (await state(job)) === 'waiting';
      },
      10_000,
      () => `job ${job.id} back in wait`,
    );

  /** Ticks `w` until it holds the lease (its connection is up and settled). */
  const holding = (w: GoneRunnerWatch, id: string) =>
    waitUntil(
      async () => {
        await w.tick();
        return (await redis.hget(keys.goneRunnerLease(), 'holder')) === id;
      },
      10_000,
      () => `${id} to hold the lease`,
    );

  /** Runner `id` in the mesh's set and the agent's, as its heartbeat puts it there. */
  const register = async (id: string) => {
    await redis.zadd(keys.runners(), Date.now() + 60_000, id);
    await redis.zadd(keys.agentRunners('work'), Date.now() + 60_000, id);
  };

  /** Runner `id` takes a job as its workers do (named connection, worker name = runner id): a new one, or the next. */
  const take = async (id: string, opts: { add: boolean } = { add: true }) => {
    const connection = new Redis(server.url, {
      maxRetriesPerRequest: null,
      connectionName: runnerClientName(keys, id),
    });
    const worker = new Worker('agent-work', null, {
      connection,
      prefix: keys.bullPrefix,
      name: id,
      lockDuration: 60_000,
    });
    if (opts.add) await queue.add('step', {}, { jobId: `${id}-job` });
    const job = (await worker.getNextJob(`${id}-token`)) as Job;
    if (opts.add) t.equal(job?.id, `${id}-job`, `${id} took its job`);
    // Once: a second disconnect of an ioredis connection sets a 2 s timer (to destroy a stream that
    // did not close) that nothing clears, its stream having closed: it kept the test's process up
    // 2 s after its last test.
    let closed: Promise<void> | undefined;
    const close = () =>
      (closed ??= (async () => {
        await worker.close().catch(() => undefined);
        connection.disconnect();
      })());
    closers.push(close);
    await register(id);
    return { job, close };
  };

  /** Runner `id` takes a job, then its connections close, as a killed process's do. */
  const goneWith = async (id: string) => {
    const taken = await take(id);
    await taken.close();
    return taken;
  };

  const lock = (job: Job) => redis.get(`${queue.toKey(job.id!)}:lock`);
  return {
    keys,
    queue,
    logged,
    reclaimed,
    gone,
    watch,
    holding,
    untilWaiting,
    register,
    take,
    goneWith,
    state,
    lock,
  };
}

t.test(
  'a runner with no connection left has its jobs moved back to wait after the grace, as BullMQ moves a stalled job',
  async (t) => {
    const m = await setup(t);
    const dead = await m.take('dead');
    const alive = await m.take('alive');
    await dead.close(); // its connections close, as a killed process's do
    const w = m.watch('watcher');
    await m.holding(w, 'watcher');
    t.equal(await m.state(dead.job), 'active', 'within the grace the job stays');
    await m.untilWaiting(w, dead.job);
    t.equal(await m.lock(dead.job), null, 'its lock is gone');
    t.equal(await redis.hget(m.queue.toKey(dead.job.id!), 'stc'), '1', 'counted as a stall (BullMQ stc)');
    const events = await redis.xrange(m.queue.toKey('events'), '-', '+');
    t.ok(
      events.some(([, f]) => f.join(' ').includes(`event stalled jobId ${dead.job.id}`)),
      'a stalled event, as BullMQ emits it',
    );
    t.equal(await m.state(alive.job), 'active', "the live runner's job stays active");
    t.equal(await m.lock(alive.job), 'alive-token', '... with its lock');
    t.same(await redis.zrange(m.keys.runners(), '0', '-1'), ['alive'], 'the dead runner leaves the mesh set');
    t.same(await redis.zrange(m.keys.agentRunners('work'), '0', '-1'), ['alive'], '... and the agent set');
    t.same(m.reclaimed, [1]);
    t.same(m.gone, ['dead'], 'naming the runner gone');
    t.match(m.logged, [{ level: 'warn', obj: { runner: 'dead', jobs: 1 } }]);
    const next = await m.take('next', { add: false });
    t.equal(next.job?.id, dead.job.id, 'the next runner to take a job takes it');
  },
);

t.test(
  'a runner that takes a lapsed lease counts its holder gone since its last renewal: reclaimed at its first look',
  async (t) => {
    const m = await setup(t);
    const dead = await m.goneWith('dead');
    const [seconds, micros] = await redis.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.hset(m.keys.goneRunnerLease(), 'holder', 'dead', 'renewed', redisNow - 5000);
    const w = m.watch('watcher', { graceMs: 2000 });
    await m.holding(w, 'watcher');
    t.equal(await m.state(dead.job), 'waiting', 'no grace to wait: the lease went unrenewed for 5 s');
    t.same(m.reclaimed, [1]);
  },
);

t.test(
  'one watch looks at a time: another does nothing while the lease is held, and takes it once released',
  async (t) => {
    const m = await setup(t);
    const dead = await m.goneWith('dead');
    const first = m.watch('first', { leaseMs: 60_000, graceMs: 0 });
    const second = m.watch('second', { graceMs: 0 });
    // The first takes the lease before the dead runner is registered, so its first look reclaims nothing.
    await redis.zrem(m.keys.runners(), 'dead');
    await m.holding(first, 'first');
    await m.register('dead');
    for (let i = 0; i < 5; i++) await second.tick();
    t.equal(
      await m.state(dead.job),
      'active',
      'the second watch does not look while the first holds the lease',
    );
    await first.stop();
    t.equal(await redis.exists(m.keys.goneRunnerLease()), 0, 'stopping gives the lease up');
    await m.holding(second, 'second');
    await m.untilWaiting(second, dead.job);
    t.same(m.reclaimed, [1]);
  },
);

t.test(
  'where Redis refuses CLIENT SETNAME or CLIENT LIST, the watch judges nobody and says so once',
  async (t) => {
    for (const [user, refused, says] of [
      ['noname', 'client|setname', /CLIENT SETNAME is refused/],
      ['nolist', 'client|list', /CLIENT LIST is refused/],
    ] as const) {
      const m = await setup(t);
      await redis.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', `-${refused}`);
      const dead = await m.goneWith('dead');
      const url = `redis://${user}:pw@127.0.0.1:${server.port}`;
      const w = m.watch('watcher', { redis: { url }, graceMs: 0 });
      await waitUntil(
        async () => {
          await w.tick();
          return m.logged.some((l) => says.test(l.msg ?? ''));
        },
        10_000,
        () => `the watch to say ${says}`,
      );
      for (let i = 0; i < 5; i++) await w.tick();
      t.equal(await m.state(dead.job), 'active', `${user}: the job waits for its lock`);
      t.equal(m.logged.filter((l) => says.test(l.msg ?? '')).length, 1, `${user}: said once`);
      t.same(m.reclaimed, []);
    }
  },
);

t.test(
  'a watch whose connection came back judges nobody for settleMs: the others may still be reconnecting',
  async (t) => {
    const m = await setup(t);
    const settleMs = 1000;
    // Redis has been up longer than settleMs, so a first connection judges at once.
    await waitUntil(
      async () => Number(/uptime_in_seconds:(\d+)/.exec(await redis.info('server'))?.[1]) >= 2,
      10_000,
      () => 'Redis up 2 s',
    );
    const w = m.watch('watcher', { graceMs: 0, settleMs });
    await m.holding(w, 'watcher');
    const name = runnerClientName(m.keys, 'watcher');
    const list = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'normal'));
    const id = new RegExp(`^id=(\\d+) .* name=${name} `, 'm').exec(list)?.[1];
    t.ok(id, "the watch's connection bears the runner's name");
    // Gone before the watch's connection drops (the watch looks only when ticked): every look
    // below has a runner to judge.
    const dead = await m.goneWith('dead');
    const killed = Date.now();
    await redis.call('CLIENT', 'KILL', 'ID', id!);
    await waitUntil(
      async () => String(await redis.call('CLIENT', 'LIST', 'TYPE', 'normal')).includes(`name=${name} `),
      10_000,
      () => 'the watch to reconnect',
    );
    // It reconnected after the kill: until settleMs after the kill, every look is within settleMs
    // of the reconnection, however long the reconnection took.
    while (Date.now() < killed + settleMs) await w.tick();
    t.equal(await m.state(dead.job), 'active', 'within settleMs of its reconnection the watch judged nobody');
    await m.untilWaiting(w, dead.job);
  },
);
