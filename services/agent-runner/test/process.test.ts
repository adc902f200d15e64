// The runner process's own parts (src/process/): its heartbeat in the mesh's runner sets, on a real
// Redis, and the bounds of draining its workers at shutdown.
import { keyLayout, type Logger } from '@agentmesh/shared';
import { monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { stalledConnection, within } from '@agentmesh/test-support/stalled-connection';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { RequeueError } from '../src/loop/job-errors.js';
import { drainWorkers } from '../src/process/drain-workers.js';
import { startHeartbeat } from '../src/process/heartbeat.js';
import { closeMetricsServer, serveMetrics } from '../src/process/metrics-server.js';

// A runner's heartbeat (heartbeat.ts) puts it in each hosted agent's runner set and in the mesh's
// set, with an expiry three beats out. Withdrawn, it leaves the agents' sets, and the mesh's only
// when it drained: a runner that leaves jobs it holds stays there for the gone-runner watch.
t.test('startHeartbeat', async (t) => {
  const server = await startRedis();
  t.teardown(() => server.stop());
  const redis = new Redis(server.url);
  t.teardown(() => redis.disconnect());
  const log = { debug() {}, info() {}, warn() {}, error() {} } as Logger;

  for (const drained of [true, false]) {
    t.test(
      `a runner withdrawn ${drained ? 'after' : 'without'} a drain leaves the agents' sets${drained ? ' and the mesh set' : ', not the mesh set'}`,
      async (t) => {
        const keys = keyLayout(`beat-${drained}`);
        const before = Date.now();
        const beat = await startHeartbeat(redis, keys, ['a', 'b'], 'r1', log);
        t.teardown(() => beat.stop());
        for (const set of [keys.runners(), keys.agentRunners('a'), keys.agentRunners('b')]) {
          const expiry = Number(await redis.zscore(set, 'r1'));
          t.ok(expiry >= before + 6000, `${set}: expires three beats out`);
        }
        beat.stop();
        await beat.withdraw(drained);
        t.equal(await redis.zcard(keys.agentRunners('a')), 0);
        t.equal(await redis.zcard(keys.agentRunners('b')), 0);
        t.equal(await redis.zcard(keys.runners()), drained ? 0 : 1);
      },
    );
  }

  // Its readers count only entries still ahead of now, so pruning the expired ones can wait: each beat
  // renews the runner's entry in every set, and every PRUNE_EVERY-th (the first included) prunes.
  t.test('each beat renews every set; the expired entries go every 15th beat', async (t) => {
    const keys = keyLayout('beat-prune');
    const sets = [keys.runners(), keys.agentRunners('a'), keys.agentRunners('b')];
    for (const set of sets) await redis.zadd(set, Date.now() - 60_000, 'gone');
    const monitor = await monitorRedis(server.port);
    t.teardown(() => monitor.stop());
    const beat = await startHeartbeat(redis, keys, ['a', 'b'], 'r1', log, { intervalMs: 20 });
    t.teardown(() => beat.stop());
    for (const set of sets)
      t.equal(await redis.zscore(set, 'gone'), null, `${set}: pruned by the first beat`);
    await waitUntil(
      async () => monitor.seen.filter(({ args }) => args[0] === 'zadd').length >= 3 * 20,
      10_000,
      () => 'twenty beats',
    );
    beat.stop();
    await new Promise((r) => setTimeout(r, 50)); // the last beat's commands reach MONITOR
    const count = (command: string, set: string) =>
      monitor.seen.filter(({ args }) => args[0] === command && args[1] === set).length;
    for (const set of sets) {
      const beats = count('zadd', set);
      t.ok(beats >= 20, `${set}: renewed at every beat (${beats})`);
      t.equal(count('zremrangebyscore', set), Math.ceil(beats / 15), `${set}: pruned every 15th beat`);
    }
  });
});

// drainWorkers' bounds: jobs held past the drain are requeued, and a worker that never
// finishes closing (its blocking connection still reconnecting after a Redis blip) does not hold
// the runner's shutdown forever.
t.test('drainWorkers', async (t) => {
  /** A worker whose close() resolves when `closes` says so (never, when it never does). */
  const worker = (closes: Promise<void>) => ({ close: () => closes }) as unknown as Worker;

  t.test('workers that close in time: true, nothing requeued', async (t) => {
    const job = new AbortController();
    t.equal(await drainWorkers([worker(Promise.resolve())], new Map([['a', job]]), 1000, 1000), true);
    t.notOk(job.signal.aborted);
  });

  t.test('past the drain the jobs held are requeued; their end closes the workers', async (t) => {
    const job = new AbortController();
    const closes = new Promise<void>((r) => job.signal.addEventListener('abort', () => r()));
    t.equal(await drainWorkers([worker(closes)], new Map([['a', job]]), 10, 60_000), true);
    t.type(job.signal.reason, RequeueError);
  });

  t.test('a worker that never closes: false once the grace has passed, not a hang', async (t) => {
    const job = new AbortController();
    t.equal(await drainWorkers([worker(new Promise(() => {}))], new Map([['a', job]]), 10, 10), false);
    t.type(job.signal.reason, RequeueError);
  });
});

t.test('closing the metrics server drops connections with no request, or half of one', async (t) => {
  const server = await serveMetrics(
    { metrics: async () => '', contentType: 'text/plain' },
    async () => [],
    0,
  );
  const port = (server.address() as { port: number }).port;
  const silent = await stalledConnection(port);
  const half = await stalledConnection(port, 'GET /metr');
  // Node stops timing headers once its server closes, and would wait for both clients.
  const took = await within(closeMetricsServer(server), 5000);
  t.ok(took < 5000, `closed in ${took} ms`);
  await within(Promise.all([silent.closed, half.closed]), 1000);
});
