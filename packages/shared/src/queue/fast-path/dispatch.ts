import { dispatchKeys } from '../../keys.js';
import { REDIS_NOW_MS } from '../../store/lua-fragments.js';
import { BULLMQ_VERSION, bullmqScript } from './bullmq-script.js';
import { MOVE_TO_ACTIVE_KEYS, markedSettings, takeStepLua } from './take-step.js';

/** Starts the last argument of an add that may dispatch its job to a blocked worker. */
const DISPATCH_MARK = 'agentmesh:dispatch:1:';

/** How long a dispatched job's answer waits in a worker's inbox before it expires, ms. */
const INBOX_TTL_MS = 60_000;

/**
 * What a worker blocked on its queue offers the adds of that queue (dispatch.ts): the inbox it
 * also blocks on, the lock and name its takes carry, and the head of its take's settings
 * (take-activation.ts), to which the add appends the times.
 */
export interface DispatchOffer {
  inbox: string;
  lockDuration: number;
  name: string;
  head: string;
}

/**
 * Ahead of BullMQ's add of a standard job: `meshDispatchJob(jobId)` dispatches the job just added to
 * a worker that blocks on the queue, if one does. The take runs here, in the add, exactly as that
 * worker's own take would (takeStepLua: its token, lock and name, and the activation of the
 * job's invocation), and its answer goes to the worker's inbox, which its block also watches: the
 * worker wakes holding the job instead of waking on the marker to take it. The marker the
 * add set goes when no other job waits, so no other worker wakes for nothing. The add's answer
 * is BullMQ's. A worker registers before it blocks, for as long as the block lasts, by Redis's
 * clock, and leaves the set when its block ends; the worker picked leaves it here.
 */
const DISPATCH_PRELUDE = `${REDIS_NOW_MS}
local function meshBullTake(KEYS, ARGV)
${takeStepLua()}
end
${markedSettings('meshDispatch', DISPATCH_MARK)}
local function meshDispatchJob(jobId)
  if not meshDispatch or type(jobId) ~= 'string' then return jobId end
  local queueKey = string.sub(KEYS[1], 1, -5)
  local blocked = queueKey .. '${dispatchKeys.blocked('')}'
  redis.call('ZREMRANGEBYSCORE', blocked, '-inf', redisNowMs())
  local first = redis.call('ZRANGE', blocked, 0, 0, 'WITHSCORES')
  local picked = first[1]
  if not picked then return jobId end
  redis.call('ZREM', blocked, picked)
  local ok, offer = pcall(cjson.decode, redis.call('HGET', queueKey .. '${dispatchKeys.offers('')}', picked) or 'null')
  if not ok or type(offer) ~= 'table' then return jobId end
  local keys = {}
  for i, suffix in ipairs({${MOVE_TO_ACTIVE_KEYS.map((k) => `'${k}'`).join(', ')}}) do keys[i] = queueKey .. suffix end
  local token = offer.name .. ':d:' .. meshDispatch.token
  local opts = cmsgpack.pack({token = token, lockDuration = offer.lockDuration, name = offer.name})
  local settings = offer.head .. meshDispatch.now .. '","nowIso":"' .. meshDispatch.nowIso .. '","only":' .. cjson.encode(jobId) .. '}'
  local reply = meshBullTake(keys, {queueKey, meshDispatch.now, opts, settings})
  if type(reply) ~= 'table' or reply[2] ~= jobId then
    -- Not taken (the queue paused, or another job first): the worker still blocks, as registered.
    redis.call('ZADD', blocked, first[2], picked)
    return jobId
  end
  if redis.call('LLEN', KEYS[1]) == 0 and redis.call('ZCARD', queueKey .. 'prioritized') == 0 then
    redis.call('ZREM', KEYS[9], '0')
  end
  redis.call('ZADD', offer.inbox, 0, cmsgpack.pack({token, reply}))
  redis.call('PEXPIRE', offer.inbox, ${INBOX_TTL_MS})
  return jobId
end
`;

/** BullMQ's add of a standard job, its answer going through meshDispatchJob. */
const ADD = bullmqScript('addStandardJob', 9);
const ADD_COMMAND = `${ADD.name}:${BULLMQ_VERSION}`;

let lua: string | undefined;

/** The dispatching add's Lua (DISPATCH_PRELUDE, then BullMQ's add with its last line changed). */
export function dispatchingAddLua(): string {
  if (lua) return lua;
  const end = ADD.content.lastIndexOf('return jobId');
  if (end < 0 || ADD.content.slice(end + 'return jobId'.length).trim() !== '')
    throw new Error(
      `bullmq ${BULLMQ_VERSION}: ${ADD.name} no longer ends in "return jobId", where the mesh changes it; ` +
        'check packages/shared/src/queue/fast-path/dispatch.ts against this version',
    );
  lua = `${DISPATCH_PRELUDE}${ADD.content.slice(0, end)}return meshDispatchJob(jobId)\n`;
  return lua;
}

type Step = (args: unknown[]) => Promise<unknown>;

/**
 * Makes BullMQ's adds of standard jobs on `client` (a gateway's connection, before any Queue on it
 * defines BullMQ's own) dispatch each job to a worker blocked on its queue, when one is. Only on one
 * Redis server: on a cluster the invocation's keys and the queue's are in different slots, and
 * BullMQ's add stands.
 */
export function defineDispatchingAdd(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  client.defineCommand(ADD_COMMAND, { numberOfKeys: ADD.keys, lua: dispatchingAddLua() });
  const host = client as unknown as Record<string, Step>;
  const send = host[ADD_COMMAND]!;
  let taken = 0;
  const tag = Math.random().toString(36).slice(2, 10);
  host[ADD_COMMAND] = (args) => {
    const now = Date.now();
    const mark = { now: String(now), nowIso: new Date(now).toISOString(), token: `${tag}${taken++}` };
    return send.call(client, [...args, `${DISPATCH_MARK}${JSON.stringify(mark)}`]);
  };
}
