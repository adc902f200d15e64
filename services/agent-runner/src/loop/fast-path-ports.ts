// What the loop asks of the queue fast path (queue/fast-path): shapes declared here and filled in
// there, so the loop imports nothing of the queue (test/runner-layers.test.ts). With
// MESH_QUEUE_FASTPATH off none of them is given, and the loop runs on BullMQ's public API alone.
import type { Job } from 'bullmq';
import type { ChildJob } from './steps/child-jobs.js';
import type { Activation, ChildSubmission } from './store/activation-store.js';

/** What ACTIVATE records of a ReAct agent's first model call (see reactStart in run-activation). */
export interface ReactStart {
  firstCallId: string;
  model: string;
  defHash: string;
  /** The agent checks a child's input first (it has an input schema). */
  inputSchema: boolean;
}

/** What the take answers for its job's invocation: ACTIVATE's reply, null when it is gone. */
export type TakenActivation = unknown[] | null;

/** A worker of this runner that takes a job right behind the step that makes it ready (trailing-takes.ts). */
export interface TrailingTaker {
  /** Whether it can take a job now; `freeing` when the caller's own slot frees at once. */
  canTake(freeing?: boolean): boolean;
  /** Queues the take on `target` behind its last step; with `only`, of that job alone. */
  queue(target: object, only?: string): void;
}

/** The parent a child's completion may move on, and the worker of this runner that takes it right behind. */
export interface ParentTake {
  parentId: string;
  takes: TrailingTaker;
}

/** The step that completes a job, which a delegation's end rides in (finish-in-completion.ts). */
export interface JobFinishes {
  /**
   * Has FINISH (`args`: its keys, then its arguments) ride in the step that completes job `jobId`;
   * resolves true when it wrote the end, false when the invocation had ended already.
   */
  defer(jobId: string, args: (string | number)[], parentTake?: ParentTake): Promise<boolean>;
}

/** A delegation's submission as steps/delegate.ts prepared it (submit-with-jobs.ts sends it). */
export interface Submission {
  job: Job;
  activation: Activation;
  /** Every sub-agent call of the turn, in order; `jobs` are theirs, index for index. */
  calls: readonly { callId: string }[];
  /** The calls not submitted before (a replay submits none of them again). */
  fresh: ChildSubmission[];
  jobs: ChildJob[];
  park: { park: boolean; resumeCall?: string };
  /** The parent job's token: its job parks in the last write when given. */
  token: string | undefined;
}
