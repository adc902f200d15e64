import { ACTIVATE_FUNCTION } from '../../store/lua-scripts.js';
import { BULLMQ_VERSION, type BullScript, bullmqScript } from './bullmq-script.js';

/** Starts the last argument of a take step that activates the job's invocation (take-activation.ts). */
export const TAKE_MARK = 'agentmesh:take:1:';

/**
 * Lua that reads the settings the mesh appends to a BullMQ step as its last argument: `local name`
 * holds them, decoded from JSON, when that argument starts with `mark`; else nil (BullMQ's own
 * callers append nothing).
 */
export function markedSettings(name: string, mark: string): string {
  return `local ${name} = ARGV[#ARGV]
if type(${name}) == 'string' and string.sub(${name}, 1, ${mark.length}) == '${mark}' then
  ${name} = cjson.decode(string.sub(${name}, ${mark.length + 1}))
else
  ${name} = nil
end`;
}

/**
 * Lua put ahead of BullMQ's take steps: when the step's last argument is the mark and settings a
 * worker appended, `meshTakeActivation(jobKey)` activates the invocation of the job taken —
 * ACTIVATE's own function, on the keys the job's data names — and its reply rides back with the
 * job. The job's data must be a mesh job of the worker's agent; anything else is left to the
 * processor (which refuses it), as is every take whose settings are absent. A failure inside
 * ACTIVATE answers {'error', message}: the processor fails as ACTIVATE would.
 */
export const TAKE_PRELUDE = `${ACTIVATE_FUNCTION}
${markedSettings('meshTake', TAKE_MARK)}
-- A trailing take of one job only (trailing-takes.ts): none unless that job is the next to be taken.
if meshTake and meshTake.only and redis.call('LINDEX', KEYS[1], -1) ~= meshTake.only then return {0, 0, 0, 0} end
local function meshKey(parts, root, id)
  local key = parts[1] .. root .. parts[2]
  if parts[3] then key = key .. id .. parts[3] end
  return key
end
local function meshTakeActivation(jobKey)
  if not meshTake then return nil end
  local ok, data = pcall(cjson.decode, redis.call('HGET', jobKey, 'data') or 'null')
  if not ok or type(data) ~= 'table' or data.v ~= 1 or data.agent ~= meshTake.agent
    or type(data.invocationId) ~= 'string' or type(data.rootId) ~= 'string' then return nil end
  local argv = {meshTake.now, meshTake.runner, meshTake.nowIso}
  local react = meshTake.react
  if type(react) == 'table' then
    local child = data.invocationId ~= data.rootId and react.inputSchema
    argv[4], argv[5], argv[6], argv[7] = react.firstCallId, react.model, react.defHash, child and '1' or '0'
  end
  local k = meshTake.keys
  local done, reply = pcall(meshActivate, meshKey(k.inv, data.rootId, data.invocationId),
    meshKey(k.calls, data.rootId, data.invocationId), meshKey(k.events, data.rootId), argv)
  if not done then return {'error', tostring(reply)} end
  return reply or false
end
`;

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
  [
    'addBaseMarkerIfNeeded(markerKey, false)',
    'local meshMore = rcall("LLEN", KEYS[1]) > 0 or rcall("ZCARD", KEYS[3]) > 0\n' +
      '  if meshMore then addBaseMarkerIfNeeded(markerKey, false) end',
  ],
  [
    'return {rcall("HGETALL", jobKey), jobId, 0, 0}',
    'return {rcall("HGETALL", jobKey), jobId, 0, meshMore and 0 or -(getNextDelayedTimestamp(KEYS[7]) or 1),\n' +
      '    meshTakeActivation(jobKey)}',
  ],
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

/** The suffixes of the queue's key that are moveToActive's keys, in its order. */
export const MOVE_TO_ACTIVE_KEYS = [
  'wait',
  'active',
  'prioritized',
  'events',
  'stalled',
  'limiter',
  'delayed',
  'paused',
  'meta',
  'pc',
  'marker',
] as const;

let take: string | undefined;

/** moveToActive changed to activate (TAKE_PRELUDE, TAKE_CHANGES): the take of every mesh worker. */
export function takeStepLua(): string {
  take ??= changeScript(
    MOVE_TO_ACTIVE.name,
    TAKE_PRELUDE + MOVE_TO_ACTIVE.content,
    TAKE_CHANGES,
    'packages/shared/src/queue/fast-path/take-step.ts',
  );
  return take;
}
