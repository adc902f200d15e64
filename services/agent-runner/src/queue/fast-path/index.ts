/**
 * The queue fast path: every part of the mesh that reaches past BullMQ's public API (its Lua read
 * from the installed package and changed, its private Worker and Job members), behind
 * MESH_QUEUE_FASTPATH (default on; see docs/architecture/queue-fast-path.md). process/runner.ts
 * imports this module only when the switch is on and Redis is one server; with it off the runner
 * runs stock BullMQ and none of this is loaded. The gateway never loads it.
 */
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { RunnerContext } from '../../loop/steps/runner-context.js';
import { GoneRunnerWatch, type GoneRunnerWatchOptions } from './gone-runners.js';
import { defineGuardedAdd } from './guarded-add.js';
import { defineGuardedPark } from './guarded-park.js';
import { submitWithJobs } from './submit-with-jobs.js';
import { type FastWorker, type FastWorkerSettings, fastWorker } from './worker.js';

export type { FastWorker, FastWorkerSettings } from './worker.js';

/** A runner's workers as the fast path builds them (worker.ts). */
export type WorkerFastPath = (name: string, ctx: RunnerContext, s: FastWorkerSettings) => FastWorker;

/** What the stock runner asks of the fast path. */
export interface RunnerFastPath {
  /** Builds a hosted agent's worker (queue/agent-worker.ts gives its settings). */
  worker: WorkerFastPath;
  /** Submits a delegation's children with their jobs in the same writes (steps/delegate.ts). */
  submitWithJobs: typeof submitWithJobs;
  /** Moves a dead runner's jobs on within about a second (gone-runners.ts). */
  watchGoneRunners(opts: GoneRunnerWatchOptions): GoneRunnerWatch;
}

/**
 * The fast path of a runner whose store writes go through `store` (where the guarded add and park
 * are defined: they ride on the store's connection).
 */
export function runnerFastPath(store: MeshRedis): RunnerFastPath {
  defineGuardedAdd(store); // child jobs ride behind their submissions (guarded-add.ts)
  defineGuardedPark(store); // and the parent's job parks in the same write (guarded-park.ts)
  return {
    worker: fastWorker,
    submitWithJobs,
    watchGoneRunners: (opts) => new GoneRunnerWatch(opts),
  };
}
