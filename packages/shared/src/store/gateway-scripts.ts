import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import { IS_TERMINAL, STORE_TEXTS, TEXTS_OF } from './lua-fragments.js';
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

/**
 * Decides a pending approval (docs/guides/approvals-and-budgets.md), in one step on the tree's keys: the decision is written
 * once, and the call record goes from `awaiting_approval` to `approved`, or to `rejected` with
 * its tool message. KEYS: inv, calls. ARGV: callId, approved ('1'/'0'), decisionJSON,
 * contentJSON (the rejection's tool message as a JSON string), finishedAtIso.
 * Returns 0 (no such approval), 1 (decided the same way before), 2 (decided otherwise before),
 * 3 (decided now), 4 (the invocation ended undecided).
 */
export const DECIDE_APPROVAL: LuaScript = {
  numberOfKeys: 2,
  lua: `${IS_TERMINAL}
if not redis.call('HGET', KEYS[1], 'approval:' .. ARGV[1]) then return 0 end
local prev = redis.call('HGET', KEYS[1], 'decision:' .. ARGV[1])
if prev then
  -- decisionJSON starts with {"approved":…; a reason cannot hold an unescaped quote.
  local approved = string.find(prev, '"approved":true', 1, true) ~= nil
  if approved == (ARGV[2] == '1') then return 1 end
  return 2
end
local status = redis.call('HGET', KEYS[1], 'status')
if isTerminal(status) then return 4 end
redis.call('HSET', KEYS[1], 'decision:' .. ARGV[1], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'approvalsPending', -1)
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if rec then
  -- Only the top-level status can match: inside a JSON string every quote is escaped.
  local a, b = string.find(rec, '"status":"awaiting_approval"', 1, true)
  if a then
    if ARGV[2] == '1' then
      rec = rec:sub(1, a - 1) .. '"status":"approved"' .. rec:sub(b + 1)
    else
      rec = rec:sub(1, a - 1) .. '"status":"rejected"' .. rec:sub(b + 1, -2) ..
        ',"finishedAt":"' .. ARGV[5] .. '","content":' .. ARGV[4] .. '}'
    end
    redis.call('HSET', KEYS[2], ARGV[1], rec)
  end
end
return 3`,
};

/**
 * Reads the invocation a fork starts from (docs/guides/durability.md), in one step, within bounds: its state, and
 * its call records with the tree texts they refer to, unless there are more than ARGV[1] records
 * or they hold more than ARGV[2] bytes, texts included (then none are read: a fork refuses them,
 * §16). KEYS: inv, calls, the tree's texts. ARGV: maxRecords, maxBytes.
 * Returns {stateFlat, callsFlat, count, bytes, textsFlat}: `bytes` summed only within the count bound.
 */
export const READ_FORK_SOURCE: LuaScript = {
  numberOfKeys: 3,
  lua: `${TEXTS_OF}
local state = redis.call('HGETALL', KEYS[1])
if #state == 0 then return {state, {}, 0, 0, {}} end
local count = redis.call('HLEN', KEYS[2])
if count > tonumber(ARGV[1]) then return {state, {}, count, 0, {}} end
local bytes = 0
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
  bytes = bytes + string.len(field) + redis.call('HSTRLEN', KEYS[2], field)
end
if bytes > tonumber(ARGV[2]) then return {state, {}, count, bytes, {}} end
local calls = redis.call('HGETALL', KEYS[2])
local texts = textsOf(KEYS[3], {}, calls)
for i = 2, #texts, 2 do bytes = bytes + string.len(texts[i]) end
if bytes > tonumber(ARGV[2]) then return {state, {}, count, bytes, {}} end
return {state, calls, count, bytes, texts}`,
};

/**
 * Creates a fork (docs/guides/durability.md) unless it exists: its state, the call records it reuses, the tree
 * texts they refer to (copied into the fork's own tree: a tree never refers to another's), and its
 * first events (the reused calls, then its `queued` status), in one step on the fork's own tree.
 * Every key gets the TTL (deadline + retention) as a new root's does; FINISH sets the retention
 * once it ends. KEYS: inv, calls, events, texts. ARGV: ttlSeconds, n records, n × (callId,
 * recordJSON), m events, m × eventJSON, the texts (their count, then ref, text pairs:
 * STORE_TEXTS), ...hash fields. Returns 1 when created, 0 when it already existed.
 */
export const CREATE_FORK: LuaScript = {
  numberOfKeys: 4,
  lua: `${STORE_TEXTS}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local ttl = tonumber(ARGV[1])
-- HSET in slices: unpack() of thousands of arguments overflows Lua's stack.
local function hsetSlices(key, from, to)
  for i = from, to, 1000 do
    redis.call('HSET', key, unpack(ARGV, i, math.min(i + 999, to)))
  end
end
local n = tonumber(ARGV[2])
local at = 3 + 2 * n
if n > 0 then
  hsetSlices(KEYS[2], 3, at - 1)
  redis.call('EXPIRE', KEYS[2], ttl)
end
local m = tonumber(ARGV[at])
for i = at + 1, at + m do
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[i])
end
if m > 0 then redis.call('EXPIRE', KEYS[3], ttl) end
hsetSlices(KEYS[1], storeTexts(KEYS[4], KEYS[1], ARGV, at + m + 1), #ARGV)
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[4], ttl)
return 1`,
};

/**
 * Reads an invocation's state and call records in one step, with the tree texts they refer to
 * (store/tree-texts.ts). KEYS: inv, calls, the tree's texts. Returns {stateFlat, callsFlat, textsFlat}.
 */
export const READ_INVOCATION: LuaScript = {
  numberOfKeys: 3,
  lua: `${TEXTS_OF}
local state, calls = redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])
return {state, calls, textsOf(KEYS[3], state, calls)}`,
};
