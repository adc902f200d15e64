import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';

/** The BullMQ states `mesh_queue_jobs` reports: the work an agent's runners have ahead or hold. */
export const QUEUE_STATES = ['waiting', 'active', 'waiting-children', 'delayed'] as const;

/** How long one reading of the queues serves scrapes; a scrape storm costs Redis one round per period. */
export const QUEUE_COUNTS_CACHE_MS = 1000;
/** A scrape does not wait longer than this for Redis; the gauge is then empty (unknown), not stale. */
export const QUEUE_COUNTS_TIMEOUT_MS = 2000;

type Counts = Map<string, Record<string, number>>;

/**
 * `mesh_queue_jobs{agent, state}`: the jobs of every agent's queue by state, read from Redis when
 * scraped (at most once per `cacheMs`, concurrent scrapes sharing one reading). While Redis is
 * unreachable (no answer within `timeoutMs`) the gauge has no samples, so a dashboard shows a gap
 * rather than a stale depth.
 */
export function queueJobsGauge(
  registry: Registry,
  queues: ReadonlyMap<string, Queue>,
  cacheMs = QUEUE_COUNTS_CACHE_MS,
  timeoutMs = QUEUE_COUNTS_TIMEOUT_MS,
): Gauge {
  let cached: { at: number; counts: Counts | undefined } | undefined;
  let reading: Promise<Counts | undefined> | undefined;
  const read = (): Promise<Counts | undefined> => {
    if (cached && Date.now() - cached.at < cacheMs) return Promise.resolve(cached.counts);
    reading ??= readCounts(queues, timeoutMs)
      .catch(() => undefined)
      .then((counts) => {
        // A failed reading is kept for the period too: an outage must not turn a storm into retries.
        cached = { at: Date.now(), counts };
        return counts;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  return new Gauge({
    name: 'mesh_queue_jobs',
    help: 'Jobs in each agent queue by BullMQ state (waiting, active, waiting-children, delayed).',
    labelNames: ['agent', 'state'],
    registers: [registry],
    async collect() {
      const counts = await read();
      this.reset();
      for (const [agent, byState] of counts ?? []) {
        for (const state of QUEUE_STATES) this.set({ agent, state }, byState[state] ?? 0);
      }
    },
  });
}

async function readCounts(queues: ReadonlyMap<string, Queue>, timeoutMs: number): Promise<Counts> {
  const entries = [...queues].map(
    async ([agent, queue]) => [agent, await queue.getJobCounts(...QUEUE_STATES)] as const,
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('queue counts timed out')), timeoutMs);
  });
  try {
    return new Map(await Promise.race([Promise.all(entries), timeout]));
  } finally {
    clearTimeout(timer);
  }
}
