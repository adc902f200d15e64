import { BULLMQ_VERSION, type BullScript, bullmqScript } from './bullmq-script.js';
import { runnerLua } from './runner-lua.js';

/** Lua put ahead of BullMQ's take steps: the activation of the job taken (lua/take-prelude.lua). */
export const TAKE_PRELUDE = runnerLua.text('take-prelude');

/** A change of one line of a BullMQ step: the line as BullMQ ships it, and what it becomes. */
export type ScriptChange = [from: string, to: string];

/**
 * The two lines of prepareJobForProcessing (in every step that takes a job) that change: the
 * unconditional re-add of the queue's marker, and the answer with the job taken. KEYS[1], KEYS[3]
 * and KEYS[7] are the queue's wait list, prioritized set and delayed set in those steps.
 * - the marker is put back only when another job waits. BullMQ puts it back always, so a job taken
 *   from an idle queue woke every worker blocked on that queue — in every runner — to find nothing.
 *   A job added later sets the marker itself, a delayed one its own timed marker, so no wake-up that
 *   could find a job is lost;
 * - the answer says when no other job waits: its delay field (0 from BullMQ) is then negative, -1
 *   or minus the time the next delayed job is due (a worker reads it as no delay when it does not
 *   take the hint);
 * - the job's invocation may be activated in the same step (TAKE_PRELUDE): its reply is a fifth
 *   field of the answer, which BullMQ does not read.
 */
export const TAKE_CHANGES: readonly ScriptChange[] = [
  ['addBaseMarkerIfNeeded(markerKey, false)', runnerLua.text('take-marker').trimEnd()],
  ['return {rcall("HGETALL", jobKey), jobId, 0, 0}', runnerLua.text('take-answer').trimEnd()],
];

/**
 * `lua` with each change made; a BullMQ whose text no longer holds a changed line exactly once is
 * refused, naming `where` the changes are kept, so they are checked against that version.
 */
export function changeScript(
  name: string,
  lua: string,
  changes: readonly ScriptChange[],
  where: string,
): string {
  for (const [from, to] of changes) {
    const parts = lua.split(from);
    if (parts.length !== 2)
      throw new Error(
        `bullmq ${BULLMQ_VERSION}: ${name} no longer holds "${from}" once, where the mesh changes it; ` +
          `check ${where} against this version`,
      );
    lua = parts.join(to);
  }
  return lua;
}

/** BullMQ's step that takes the next job, as the installed package ships it. */
export const MOVE_TO_ACTIVE: BullScript = bullmqScript('moveToActive', 11);

let take: string | undefined;

/** moveToActive changed to activate (TAKE_PRELUDE, TAKE_CHANGES): the take of every mesh worker. */
export function takeStepLua(): string {
  take ??= changeScript(
    MOVE_TO_ACTIVE.name,
    TAKE_PRELUDE + MOVE_TO_ACTIVE.content,
    TAKE_CHANGES,
    'services/agent-runner/src/queue/fast-path/take-step.ts',
  );
  return take;
}
