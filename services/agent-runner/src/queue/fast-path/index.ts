/**
 * The queue fast path: every part of the mesh that reaches past BullMQ's public API (its Lua read
 * from the installed package and changed, its private Worker and Job members), behind
 * MESH_QUEUE_FASTPATH (default on; see docs/architecture/queue-fast-path.md). process/runner.ts
 * imports this module only when the switch is on and Redis is one server; with it off the runner
 * runs stock BullMQ and none of this is loaded. The gateway never loads it.
 */
import type { KeyLayout, Logger } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { RunnerContext } from '../../loop/steps/runner-context.js';
import { RunnerAffinity } from './affinity.js';
import { GoneRunnerWatch, type GoneRunnerWatchOptions } from './gone-runners.js';
import { defineGuardedAdd } from './guarded-add.js';
import { defineGuardedPark } from './guarded-park.js';
import { submitWithJobs } from './submit-with-jobs.js';
import { type FastWorker, type FastWorkerSettings, fastWorker } from './worker.js';

export type { RunnerAffinity } from './affinity.js';
export type { FastWorker, FastWorkerSettings } from './worker.js';

/** A runner's workers as the fast path builds them (worker.ts), with the runner's affinity. */
export type WorkerFastPath = (name: string, ctx: RunnerContext, s: FastWorkerSettings) => FastWorker;

/** What the stock runner asks of the fast path. */
export interface RunnerFastPath {
  /** Builds a hosted agent's worker (queue/agent-worker.ts gives its settings). */
  worker: WorkerFastPath;
  /** Submits a delegation's children with their jobs in the same writes (steps/delegate.ts). */
  submitWithJobs: typeof submitWithJobs;
  /** Moves a dead runner's jobs on within about a second (gone-runners.ts). */
  watchGoneRunners(opts: GoneRunnerWatchOptions): GoneRunnerWatch;
  /** Keeps each agent's jobs on one runner while it keeps up (affinity.ts); the workers attach to it. */
  affinity: RunnerAffinity;
}

/**
 * The fast path of runner `runnerId`, whose store writes go through `store` (where the guarded add
 * and park and the affinity's lease step are defined: they ride on the store's connection).
 */
export function runnerFastPath(
  store: MeshRedis,
  runner: { keys: KeyLayout; runnerId: string; log: Logger },
): RunnerFastPath {
  defineGuardedAdd(store); // child jobs ride behind their submissions (guarded-add.ts)
  defineGuardedPark(store); // and the parent's job parks in the same write (guarded-park.ts)
  const affinity = new RunnerAffinity({ store, ...runner });
  return {
    worker: (name, ctx, s) => fastWorker(name, ctx, s, affinity),
    submitWithJobs,
    watchGoneRunners: (opts) => new GoneRunnerWatch(opts),
    affinity,
  };
}
