import { type KeyLayout, queueName } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { type Processor, Worker, type WorkerOptions } from 'bullmq';
import type { TakenActivation } from '../../loop/fast-path-ports.js';
import { reactStart } from '../../loop/steps/run-activation.js';
import type { RunnerContext } from '../../loop/steps/runner-context.js';
import type { Slots } from '../slots.js';
import { EarlyStarts } from './early-start.js';
import { defineFetchScripts, FETCH_COMMANDS, takeFetchHints } from './fetch-scripts.js';
import { TakenActivations } from './take-activation.js';

/** What the stock worker (queue/agent-worker.ts) gives the fast path to build a worker with. */
export interface FastWorkerSettings {
  /** The worker's own connection, on which the changed steps are defined before BullMQ's. */
  connection: MeshRedis;
  options: WorkerOptions;
  processor: Processor;
  slots: Slots;
  keys: KeyLayout;
}

/** A worker of the fast path, and what its processor call reads of it. */
export interface FastWorker {
  worker: Worker;
  /** The activation the take of job `jobId` made (once), if it made one (take-activation.ts). */
  taken(jobId: string | undefined): TakenActivation | undefined;
}

/**
 * The worker of one hosted agent's queue with every part of the fast path: the changed fetch
 * steps and their hint (fetch-scripts.ts), activation in the take (take-activation.ts), early
 * starts (early-start.ts).
 */
export function fastWorker(name: string, ctx: RunnerContext, s: FastWorkerSettings): FastWorker {
  const { connection, slots } = s;
  const ready = () => slots.free > 0;
  defineFetchScripts(connection);
  const takes = new TakenActivations();
  takes.attach(connection, FETCH_COMMANDS, {
    agent: name,
    runner: ctx.runnerId,
    keys: s.keys,
    react: reactStart(ctx, name),
    ready,
  });
  // It runs once its fetches are changed (below).
  const worker = new Worker(queueName(name), s.processor, { ...s.options, autorun: false });
  takeFetchHints(worker);
  new EarlyStarts().attach(worker, (jobId) => takes.has(jobId));
  worker.run().catch((e: Error) => worker.emit('error', e));
  return { worker, taken: (jobId) => takes.take(jobId) };
}
