// What the loop asks of the queue fast path (queue/fast-path): shapes declared here and filled in
// there, so the loop imports nothing of the queue (test/repo-rules.test.ts). With
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
