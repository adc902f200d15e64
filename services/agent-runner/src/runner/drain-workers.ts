import type { Worker } from 'bullmq';
import { HandBackError } from '../job-errors.js';

/**
 * Drains the workers: they take no new jobs and the ones in hand may finish; past `drainMs` the
 * rest are handed back to the queue (their recorded calls replay wherever they resume).
 */
export async function drainWorkers(
  workers: readonly Worker[],
  inFlight: ReadonlyMap<string, AbortController>,
  drainMs: number,
): Promise<void> {
  const drained = Promise.all(workers.map((w) => w.close()));
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([
    drained.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), drainMs))),
  ]);
  clearTimeout(timer);
  if (late) for (const c of inFlight.values()) c.abort(new HandBackError());
  await drained;
}
