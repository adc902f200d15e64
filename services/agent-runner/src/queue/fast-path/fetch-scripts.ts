import type { Job, Worker } from 'bullmq';
import { BULLMQ_VERSION, type BullScript, bullmqScript } from './bullmq-script.js';
import { changeScript, MOVE_TO_ACTIVE, TAKE_CHANGES, TAKE_PRELUDE } from './take-step.js';

export type { BullScript } from './bullmq-script.js';

const FINISHING = bullmqScript('moveToFinished', 14);
const SCRIPTS: BullScript[] = [MOVE_TO_ACTIVE, FINISHING];

/**
 * BullMQ's two steps that take a job (moveToActive, and moveToFinished when it fetches the next),
 * changed where the job is taken (TAKE_CHANGES, shared queue/fast-path/take-step.ts): the marker is put back
 * only when another job waits, the answer says when none does, and on one server the job's
 * invocation is activated in the same step (take-activation.ts). A worker that takes the hint
 * (takeFetchHints) blocks on the marker at once instead of fetching again to find the queue empty.
 * The scripts are BullMQ's own text, read from the installed package, so they stay in step with
 * its job format; a BullMQ whose text no longer holds the lines changed is refused at start.
 */
export function fetchScripts(
  scripts: readonly BullScript[] = SCRIPTS,
): { name: string; numberOfKeys: number; lua: string }[] {
  return scripts.map((s) => {
    const lua = changeScript(
      s.name,
      TAKE_PRELUDE + s.content,
      TAKE_CHANGES,
      'services/agent-runner/src/queue/fast-path/fetch-scripts.ts',
    );
    return { name: `${s.name}:${BULLMQ_VERSION}`, numberOfKeys: s.keys, lua };
  });
}

let changed: ReturnType<typeof fetchScripts> | undefined;

/** The names under which the changed steps are defined (BullMQ's, with its version). */
export const FETCH_COMMANDS: readonly string[] = SCRIPTS.map((s) => `${s.name}:${BULLMQ_VERSION}`);

/** Registers the changed steps on a worker's connection, where BullMQ then finds them defined. */
export function defineFetchScripts(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  // Changed once per process, however many workers (one per hosted agent) register them.
  changed ??= fetchScripts();
  for (const s of changed) client.defineCommand(s.name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
}

/** The parts of a BullMQ 6 worker that a fetch goes through (private in its types). */
interface FetchingWorker {
  drained: boolean;
  updateDelays(limitDelay?: number, delayUntil?: number): void;
  nextJobFromJobData(jobData?: unknown, jobId?: string, token?: string): Promise<Job | undefined>;
  waitForJob(blockUntil?: number): Promise<number>;
  moveToActive(token: string, name?: string): Promise<Job | undefined>;
}

/**
 * Makes a worker take the changed steps' hint: a job that leaves no other waiting marks the
 * worker drained, so its next fetch is the blocking pop on the marker (bounded by the next delayed
 * job's time, which BullMQ's extra fetch would have told it), not one more step that finds
 * nothing. BullMQ passes every fetch's answer through updateDelays and nextJobFromJobData, one
 * right after the other; the test of this file fails if a BullMQ version stops doing so.
 * And while the worker blocks on the marker, the fetch BullMQ makes after a job parks (a parent
 * waiting for its children, a job delayed) is skipped: a job added meanwhile sets the marker and
 * ends the block, so that step, one per delegation, could only find the queue empty.
 */
export function takeFetchHints(worker: Worker): void {
  const w = worker as unknown as FetchingWorker;
  const updateDelays = w.updateDelays.bind(w);
  const nextJob = w.nextJobFromJobData.bind(w);
  const waitForJob = w.waitForJob.bind(w);
  const moveToActive = w.moveToActive.bind(w);
  let emptied = false;
  let blocked = false;
  w.updateDelays = (limitDelay = 0, delayUntil = 0) => {
    emptied = delayUntil < 0;
    updateDelays(limitDelay, emptied ? (delayUntil === -1 ? 0 : -delayUntil) : delayUntil);
  };
  w.nextJobFromJobData = (jobData, jobId, token) => {
    const taken = nextJob(jobData, jobId, token); // marks the worker not drained when given a job
    if (jobData && emptied) w.drained = true;
    emptied = false;
    return taken;
  };
  w.waitForJob = async (blockUntil) => {
    blocked = true;
    try {
      return await waitForJob(blockUntil);
    } finally {
      blocked = false; // before the worker fetches with what the block returned
    }
  };
  w.moveToActive = (token, name) => (blocked ? Promise.resolve(undefined) : moveToActive(token, name));
}
