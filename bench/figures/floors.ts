import { Queue, QueueEvents } from 'bullmq';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { forkMain } from '../support/fork-main.js';
import { spread } from '../support/spread.js';
import { stopOnExit } from '../support/stop-on-exit.js';
import { timeRuns } from '../support/time-runs.js';

/**
 * Two floors under every figure (docs/reference/benchmarks.md), measured in the same run on the
 * mesh's Redis: a Redis round trip (PING from this process) and a bare BullMQ job round trip (add →
 * a worker in another process → completion seen through QueueEvents), each after a warm-up.
 */
export async function floorFigures(ctx: BenchContext): Promise<Figure[]> {
  const n = ctx.opts.runs * 5;
  await timeRuns(() => ctx.mesh.redis.ping(), n);
  const ping = spread(await timeRuns(() => ctx.mesh.redis.ping(), n));
  const { child: worker } = await forkMain(new URL('../support/floor-worker-main.ts', import.meta.url), {
    REDIS_URL: ctx.mesh.redisUrl,
  });
  const connection = {
    host: '127.0.0.1',
    port: Number(new URL(ctx.mesh.redisUrl).port),
    maxRetriesPerRequest: null,
  };
  const queue = new Queue('floor', { connection, prefix: 'bench-floor' });
  const events = new QueueEvents('floor', { connection, prefix: 'bench-floor' });
  try {
    await events.waitUntilReady();
    let k = 0;
    const hop = async () => {
      const job = await queue.add('hop', {}, { jobId: `hop-${k++}`, removeOnComplete: { count: 1000 } });
      await job.waitUntilFinished(events, 10_000);
    };
    await timeRuns(hop, n);
    const bull = spread(await timeRuns(hop, n));
    return [
      figure('floor_redis_round_trip', 'ms', ping, {
        target: 'reported (docs/reference/benchmarks.md)',
        extra: { samples: n },
      }),
      figure('floor_bullmq_job_round_trip', 'ms', bull, {
        target: 'reported (docs/reference/benchmarks.md)',
        extra: { samples: n, completion: 'QueueEvents, worker concurrency 1 in another process' },
      }),
    ];
  } finally {
    await Promise.allSettled([queue.close(), events.close()]);
    worker.kill('SIGKILL');
    stopOnExit.untrack(worker.pid!);
  }
}
