import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Worker } from 'bullmq';

/** How long a readiness PING may take before Redis counts as unreachable (a hung server answers none). */
const PING_TIMEOUT_MS = 1000;

/**
 * Why the runner cannot take work now, one sentence per missing part; empty when it is ready
 * (`GET /readyz`): every hosted agent's worker runs and is not draining, and Redis answers.
 */
export async function runnerReadiness(
  workers: ReadonlyMap<string, Worker>,
  redis: MeshRedis,
  pingTimeoutMs = PING_TIMEOUT_MS,
): Promise<string[]> {
  const problems: string[] = [];
  // close() sets `closing` at once (SIGTERM): the drain takes no new jobs from then on.
  const draining = [...workers.values()].some((w) => w.closing);
  if (draining) problems.push('the runner is draining and takes no new jobs');
  for (const [agent, w] of draining ? [] : workers) {
    if (!w.isRunning()) problems.push(`the worker of agent ${agent} is not running`);
  }
  if (!(await answers(redis, pingTimeoutMs))) problems.push('Redis is unreachable');
  return problems;
}

// A client still reconnecting queues commands rather than failing them (maxRetriesPerRequest:
// null), so its status is read first; a connected one must answer a PING in time.
async function answers(redis: MeshRedis, ms: number): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([redis.ping().then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
