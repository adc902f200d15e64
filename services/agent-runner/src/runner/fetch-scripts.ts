import { createRequire } from 'node:module';

/** One of BullMQ's Lua steps as its package exports it. */
export interface BullScript {
  name: string;
  content: string;
  keys: number;
}

const require = createRequire(import.meta.url);
const { version } = require('bullmq/dist/cjs/version.js') as { version: string };
const SCRIPTS: BullScript[] = [
  (require('bullmq/dist/cjs/scripts/moveToActive-11.js') as { moveToActive: BullScript }).moveToActive,
  (require('bullmq/dist/cjs/scripts/moveToFinished-14.js') as { moveToFinished: BullScript }).moveToFinished,
];

// In prepareJobForProcessing, the one unconditional re-add of the queue's marker.
const REMARK = 'addBaseMarkerIfNeeded(markerKey, false)';
// KEYS[1] and KEYS[3] are the queue's wait list and prioritized set in both scripts.
const REMARK_IF_MORE = `if rcall("LLEN", KEYS[1]) > 0 or rcall("ZCARD", KEYS[3]) > 0 then ${REMARK} end`;

/**
 * BullMQ's two steps that take a job (moveToActive, and moveToFinished when it fetches the next),
 * changed in one place: the queue's marker is put back after a job is taken only when another job
 * is waiting. BullMQ puts it back always, so every job taken from an idle queue wakes every
 * worker blocked on that queue — in each runner — to find nothing, and its own worker twice
 * (profiled: two extra fetches and a blocking pop per job per runner, competing for the cores
 * the job's own hops need). A job added later sets the marker itself, a delayed one its own
 * timed marker, so no wake-up that could find a job is lost.
 *
 * The scripts are BullMQ's own text, read from the installed package, so they stay in step with
 * the job format; a BullMQ whose text no longer holds that line is refused at start.
 */
export function fetchScripts(
  scripts: readonly BullScript[] = SCRIPTS,
): { name: string; numberOfKeys: number; lua: string }[] {
  return scripts.map((s) => {
    const parts = s.content.split(REMARK);
    if (parts.length !== 2)
      throw new Error(
        `bullmq ${version}: ${s.name} no longer re-adds its marker where the runner expects it; ` +
          'check services/agent-runner/src/runner/fetch-scripts.ts against this version',
      );
    return { name: `${s.name}:${version}`, numberOfKeys: s.keys, lua: parts.join(REMARK_IF_MORE) };
  });
}

/** Registers the changed steps on a worker's connection, where BullMQ then finds them defined. */
export function defineFetchScripts(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  for (const s of fetchScripts()) client.defineCommand(s.name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
}
