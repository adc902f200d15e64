import { type KeyLayout, queueName } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { type Processor, Worker, type WorkerOptions } from 'bullmq';
import type { TakenActivation } from '../../loop/fast-path-ports.js';
import { agentLabel } from '../../loop/metrics.js';
import { reactStart } from '../../loop/steps/run-activation.js';
import type { RunnerContext } from '../../loop/steps/runner-context.js';
import type { Slots } from '../slots.js';
import { DispatchedTakes } from './dispatched-takes.js';
import { EarlyStarts } from './early-start.js';
import { COMPLETE_COMMAND, defineFetchScripts, FETCH_COMMANDS, takeFetchHints } from './fetch-scripts.js';
import { FinishesInCompletion } from './finish-in-completion.js';
import { TakenActivations } from './take-activation.js';
import { TrailingTakes } from './trailing-takes.js';

/** What the stock worker (queue/agent-worker.ts) gives the fast path to build a worker with. */
export interface FastWorkerSettings {
  /** The worker's own connection, on which the changed steps are defined before BullMQ's. */
  connection: MeshRedis;
  options: WorkerOptions;
  processor: Processor;
  slots: Slots;
  keys: KeyLayout;
  lockDurationMs: number;
}

/** A worker of the fast path, and what its processor call reads of it. */
export interface FastWorker {
  worker: Worker;
  /** The activation the take of job `jobId` made (once), if it made one (take-activation.ts). */
  taken(jobId: string | undefined): TakenActivation | undefined;
  /** The step that completes a job, which a delegation's end rides in (finish-in-completion.ts). */
  finishes: FinishesInCompletion;
}

/**
 * The worker of one hosted agent's queue with every part of the fast path: the changed fetch
 * steps and their hint (fetch-scripts.ts), activation in the take (take-activation.ts), early
 * starts (early-start.ts), a delegation's end in its job's completion (finish-in-completion.ts),
 * trailing takes (trailing-takes.ts) and dispatched takes (dispatched-takes.ts).
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
  // Outside the take's change: the take's settings stay the step's last argument.
  const finishes = new FinishesInCompletion();
  finishes.attach(connection, COMPLETE_COMMAND.name, COMPLETE_COMMAND.keys);
  // It runs once its blocks can take dispatched jobs (below).
  const worker = new Worker(queueName(name), s.processor, { ...s.options, autorun: false });
  takeFetchHints(worker);
  new EarlyStarts().attach(worker, (jobId) => takes.has(jobId));
  ctx.trailingTakes?.set(name, new TrailingTakes(worker, takes, ready));
  // Jobs the gateway's add dispatches to it while it blocks (dispatched-takes.ts).
  const dispatched = new DispatchedTakes(worker, takes, {
    runner: ctx.runnerId,
    queueKey: worker.toKey(''),
    lockDurationMs: s.lockDurationMs,
    ready,
    onDelivered: () => ctx.metrics.dispatchedJobs.inc({ agent: agentLabel(ctx.plan, name) }),
  });
  const run = () => worker.run().catch((e: Error) => worker.emit('error', e));
  dispatched.attach().then(run, (e: Error) => {
    worker.emit('error', e);
    void run();
  });
  return { worker, taken: (jobId) => takes.take(jobId), finishes };
}
