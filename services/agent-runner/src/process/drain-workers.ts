import type { Worker } from 'bullmq';
import { RequeueError } from '../loop/job-errors.js';

/**
 * How long workers may take to close once their jobs were requeued. A worker whose blocking
 * connection is still reconnecting (a Redis blip just before SIGTERM) never finishes closing: it
 * waits for that connection's end. Past this the drain stops waiting; what it holds is recovered
 * like a crashed runner's (the gone-runner watch once the runner has exited), never lost.
 */
export const CLOSE_GRACE_MS = 5000;

/**
 * Drains the workers: they take no new jobs and the ones they hold may finish; past `drainMs` the
 * rest are requeued (their recorded calls replay wherever they resume). Resolves
 * true once every worker closed, false when they did not within `graceMs` after that.
 */
export async function drainWorkers(
  workers: readonly Worker[],
  inFlight: ReadonlyMap<string, AbortController>,
  drainMs: number,
  graceMs = CLOSE_GRACE_MS,
): Promise<boolean> {
  const drained = Promise.all(workers.map((w) => w.close())).then(() => true);
  if (await within(drained, drainMs)) return true;
  for (const c of inFlight.values()) c.abort(new RequeueError());
  return within(drained, graceMs);
}

/** Whether `p` resolves true within `ms`. */
async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
