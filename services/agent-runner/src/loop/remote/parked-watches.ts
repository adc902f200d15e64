import type { Client } from '@a2a-js/sdk/client';
import { isMeshError, type KeyLayout, type Logger } from '@agentmesh/shared';
import type { RedisTarget } from '@agentmesh/shared/redis';
import type { Job } from 'bullmq';
import { CancelListener } from '../cancel-listener.js';
import { isSettled, watchRemoteTask } from './watch-remote-task.js';

// Parked remote children one runner watches at once; past it a child just sleeps its delay out.
const MAX_WATCHES = 256;

/**
 * Wakes parked remote children early, without a worker slot: while a child's job sleeps (delayed),
 * this runner keeps watching its remote task in the background and promotes the job as soon as
 * the task settles or the child is cancelled (the cancel broadcast), so the answer or the remote
 * cancellation does not wait for the delay. Only a fast path: if this runner dies, the delayed
 * job still fires on its own and any runner looks again.
 */
export class ParkedWatches {
  private readonly cancels: CancelListener;

  constructor(target: RedisTarget, log: Logger) {
    this.cancels = new CancelListener(target, log);
  }

  /** Subscribes to the mesh's cancel channel. */
  start(keys: KeyLayout): Promise<void> {
    return this.cancels.start(keys);
  }

  /** Watches `taskId` for the parked child `job` until `until` (when its delay ends anyway). */
  watch(job: Job, invocationId: string, client: Client, taskId: string, until: number): void {
    const watches = this.cancels.inFlight;
    if (watches.size >= MAX_WATCHES || watches.has(invocationId)) return;
    const cancelled = new AbortController();
    watches.set(invocationId, cancelled);
    const wake = () => job.promote().catch(() => undefined); // not delayed any more: nothing to do
    void watchRemoteTask(client, taskId, until, cancelled.signal)
      .then((task) => (isSettled(task) ? wake() : undefined))
      // The cancel broadcast (MeshError 'cancelled'); close() aborts with no reason of that kind.
      .catch(() => (isMeshError(cancelled.signal.reason, 'cancelled') ? wake() : undefined))
      .finally(() => {
        if (watches.get(invocationId) === cancelled) watches.delete(invocationId);
      });
  }

  /** Stops every watch and the subscription. */
  close(): void {
    for (const c of this.cancels.inFlight.values()) c.abort();
    this.cancels.close();
  }
}
