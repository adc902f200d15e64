/**
 * The queue fast path of a runner: every part of it that reaches past BullMQ's public API (its Lua
 * rebuilt, its private Worker and Job members), behind MESH_QUEUE_FASTPATH (default on; see
 * docs/architecture/queue-fast-path.md). process/runner.ts imports this module only when the switch is
 * on and Redis is one server; with it off the runner runs stock BullMQ and none of this is loaded.
 * The gateway's part, and the BullMQ steps both build on, are in the shared package's
 * queue/fast-path.
 */
import type { MeshRedis } from '@agentmesh/shared/redis';
import { withdrawDispatches } from './dispatched-takes.js';
import { defineTrailingTake } from './fetch-scripts.js';
import { GoneRunnerWatch, type GoneRunnerWatchOptions } from './gone-runners.js';
import { defineGuardedAdd } from './guarded-add.js';
import { defineGuardedPark } from './guarded-park.js';
import { submitWithJobs } from './submit-with-jobs.js';
import { fastWorker } from './worker.js';

export type { FinishesInCompletion } from './finish-in-completion.js';

import type { TrailingTakes } from './trailing-takes.js';

export type { TrailingTakes } from './trailing-takes.js';
export type { FastWorker, FastWorkerSettings } from './worker.js';

/** A runner's workers as the fast path builds them (worker.ts). */
export type WorkerFastPath = typeof fastWorker;

/** What the stock runner asks of the fast path. */
export interface RunnerFastPath {
  /** Builds a hosted agent's worker (queue/agent-worker.ts gives its settings). */
  worker: WorkerFastPath;
  /** Submits a delegation's children with their jobs in the same writes (steps/delegate.ts). */
  submitWithJobs: typeof submitWithJobs;
  /** The workers of the runner that take a job right behind the step that makes it ready (trailing-takes.ts). */
  trailingTakes: Map<string, TrailingTakes>;
  /** Moves a dead runner's jobs on within about a second (gone-runners.ts). */
  watchGoneRunners(opts: GoneRunnerWatchOptions): GoneRunnerWatch;
  /** Takes the runner out of the dispatching adds' choices (closing). */
  withdrawDispatches: typeof withdrawDispatches;
}

/**
 * The fast path of a runner whose store writes go through `store` (where the guarded add and park
 * and the trailing take are defined: they ride in the store's pipelines).
 */
export function runnerFastPath(store: MeshRedis): RunnerFastPath {
  defineGuardedAdd(store); // child jobs ride behind their submissions (guarded-add.ts)
  defineGuardedPark(store); // and the parent's job parks in the same write (guarded-park.ts)
  defineTrailingTake(store); // a delegation's first child is taken in that write too (trailing-takes.ts)
  return {
    worker: fastWorker,
    submitWithJobs,
    trailingTakes: new Map(),
    watchGoneRunners: (opts) => new GoneRunnerWatch(opts),
    withdrawDispatches,
  };
}
