import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import type { LuaScript } from './lua-scripts.js';

// The gateway's steps: creating a root invocation, listing it, reading a view. The runner's
// state changes (activate, record, park, finish, cancel) are in lua-scripts.ts.

/**
 * Creates a root invocation unless it exists. KEYS: inv, events. ARGV: eventJSON, ttlSeconds,
 * ...hash fields. Both keys get the TTL (deadline + retention): one orphaned in `queued` (never
 * enqueued) expires; FINISH sets the retention TTL once it ends. Returns 1 when created, 0 when it
 * already existed.
 */
export const CREATE_INVOCATION: LuaScript = {
  numberOfKeys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
if ARGV[1] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[1])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
end
return 1`,
};

/**
 * Lists a root invocation as recent (unless listed already) and keeps the set bounded, in one step
 * on its one key. KEYS: recent. ARGV: now, id, oldest score kept, rank limit, ttlSeconds. Returns 1.
 */
export const LIST_RECENT: LuaScript = {
  numberOfKeys: 1,
  lua: `
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return 1`,
};

/** Reads an invocation's state and call records in one step. KEYS: inv, calls. Returns {stateFlat, callsFlat}. */
export const READ_INVOCATION: LuaScript = {
  numberOfKeys: 2,
  lua: `return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}`,
};
