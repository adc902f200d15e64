import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import {
  IS_TERMINAL,
  SPEND_BUDGET,
  STATUS_EVENT,
  STORE_TEXTS,
  WITH_PARENT_CALL,
  WRITE_RECORD,
} from './lua-fragments.js';
import type { LuaScript } from './lua-scripts.js';

// The Lua steps that end invocations: one finishing (its parent's record with it), a tree cancelled.

/**
 * The largest view (state and call records, in bytes) the done message carries; a larger one is
 * read by the waiter (READ_INVOCATION). Every gateway receives every root's message.
 */
export const DONE_MESSAGE_MAX_BYTES = 32 * 1024;

/**
 * On the done channel, `approval <rootId>`: a node of that tree has parked waiting on a human
 * decision, so a request waiting on the root with `?wait` answers now (docs/reference/rest-api.md).
 */
export const APPROVAL_WAKE_PREFIX = 'approval ';

/**
 * Writes the terminal state once (compare-and-set), completes the parent's call record when the
 * invocation is a delegation, adds its tree usage to its parent's (`sub…` fields: each child's
 * subtree is rolled up exactly once, docs/guides/approvals-and-budgets.md), sets the retention TTL, appends the event and
 * wakes the waiters of a root (on the done channel: `id`, or `id\n[stateFlat, callsFlat]` up to
 * DONE_MESSAGE_MAX_BYTES, the answer READ_INVOCATION would give; nothing waits on a child there). A root whose
 * tree was failed (`treeError`, set by CANCEL_TREE) ends `failed` with that error, not `cancelled`.
 * KEYS: inv, calls, memory, events, parent calls, parent inv (both its own when a root), root inv,
 * the tree's texts. ARGV: epoch ('' = unfenced), status,
 * output (its hash field's value, ''), errorJSON (''), finishedAt, parentCallId (''), parentStatus (a cancelled
 * child leaves its parent's record `cancelled`: a failed delegation with reason cancelled, with
 * no terminal failure recorded), parentFieldsJSON (what the parent's record gets: `content`, or
 * `contentRef` and `contentCut`; ''),
 * parentErrorJSON, finishedAtIso, eventJSON, retentionSeconds, doneChannel, parentEventJSON (its
 * `parentCallId`, on the parent's hash only, is added here), the output's hash field (`output`,
 * or a tree text's `outputRef` / `outputTextRef`: store/tree-texts.ts), then the tree texts the
 * step stores (their count, then ref, text pairs: STORE_TEXTS).
 * A success appends its `output` event, then a terminal `status` event; a failure's eventJSON is that.
 * Optional, after the texts: a call record of this invocation written first, as RECORD_CALL would (callId,
 * recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+): the model reply that led
 * here travels with the finish, one step instead of two.
 * The tree's texts get the retention TTL once the root has ended (this step, or before it): they
 * outlive every key that refers to them, each of which got its TTL at its own FINISH.
 * Returns 1 when written, 0 when already terminal or fenced out, and the tree's error (JSON) when
 * a cancellation was written as the tree's failure, so the runner logs and counts what was written.
 */
export const FINISH: LuaScript = {
  numberOfKeys: 8,
  lua: `${STATUS_EVENT}${SPEND_BUDGET}${WRITE_RECORD}${IS_TERMINAL}${WITH_PARENT_CALL}${STORE_TEXTS}
local status = redis.call('HGET', KEYS[1], 'status')
if not status or isTerminal(status) then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
local at = storeTexts(KEYS[8], KEYS[7], ARGV, 16)
if ARGV[at] then
  writeRecord(KEYS[1], KEYS[2], KEYS[4], KEYS[7], ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5])
end
local final, err, event = ARGV[2], ARGV[4], ARGV[11]
local treeError = redis.call('HGET', KEYS[1], 'treeError')
if final == 'cancelled' and treeError then
  final, err = 'failed', treeError
  local e = cjson.decode(event)
  e.data = {status = 'failed', error = cjson.decode(treeError)}
  event = cjson.encode(e)
end
redis.call('HSET', KEYS[1], 'status', final, 'finishedAt', ARGV[5])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], ARGV[15], ARGV[3]) end
if err ~= '' then redis.call('HSET', KEYS[1], 'error', err) end
if event ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', event) end
-- Every invocation's stream ends with a terminal status event; a success's follows its output.
if final == 'succeeded' then statusEvent(KEYS[1], KEYS[4], 'succeeded', ARGV[10]) end
if redis.call('HGET', KEYS[1], 'parentId') then
  for _, f in ipairs({'ModelCalls', 'PromptTokens', 'CompletionTokens'}) do
    local own = f:sub(1, 1):lower() .. f:sub(2)
    local n = tonumber(redis.call('HGET', KEYS[1], own) or '0') + tonumber(redis.call('HGET', KEYS[1], 'sub' .. f) or '0')
    if n > 0 then redis.call('HINCRBY', KEYS[6], 'sub' .. f, n) end
  end
end
if ARGV[6] ~= '' then
  local old = redis.call('HGET', KEYS[5], ARGV[6])
  if old then
    local r = cjson.decode(old)
    if r.status == 'started' then
      r.status = ARGV[7]
      r.finishedAt = ARGV[10]
      if ARGV[8] ~= '' then
        for k, v in pairs(cjson.decode(ARGV[8])) do r[k] = v end
      end
      if ARGV[9] ~= '' then r.error = cjson.decode(ARGV[9]) end
      redis.call('HSET', KEYS[5], ARGV[6], cjson.encode(r))
      if ARGV[14] ~= '' then
        redis.call('XADD', KEYS[4], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', withParentCall(KEYS[6], ARGV[14]))
      end
    end
  end
end
local ttl = tonumber(ARGV[12])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
local rootStatus = redis.call('HGET', KEYS[7], 'status')
if not rootStatus or isTerminal(rootStatus) then redis.call('EXPIRE', KEYS[8], ttl) end
-- Only roots have waiters (a request waiting on invoke): a child's end wakes no gateway. The
-- message carries what READ_INVOCATION would answer when it is small, so a waiter need not read.
if redis.call('HGET', KEYS[1], 'parentId') == false then
  redis.call('EXPIRE', KEYS[4], ttl)
  local id = redis.call('HGET', KEYS[1], 'id')
  local state, calls = redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])
  -- A view that refers to tree texts is past the bound with them: the waiter reads it.
  local size = ARGV[15] == 'output' and 0 or ${DONE_MESSAGE_MAX_BYTES + 1}
  for _, v in ipairs(state) do size = size + #v end
  for _, v in ipairs(calls) do
    size = size + #v
    if string.find(v, '"contentRef":"', 1, true) then size = size + ${DONE_MESSAGE_MAX_BYTES + 1} end
  end
  if size <= ${DONE_MESSAGE_MAX_BYTES} then
    redis.call('PUBLISH', ARGV[13], id .. '\\n' .. cjson.encode({state, calls}))
  else
    redis.call('PUBLISH', ARGV[13], id)
  end
end
if final ~= ARGV[2] then return err end
return 1`,
};

/**
 * FINISH as the function `meshFinish(KEYS, ARGV)` (its keys and arguments as tables), so that the
 * runner's step completing a delegation's job can end its invocation first, in the same step.
 */
export const FINISH_FUNCTION = `local function meshFinish(KEYS, ARGV)
${FINISH.lua}
end
`;

/**
 * Flags a batch of one tree's invocations as cancelled (never their ancestors): each one not
 * terminal gets `cancelRequested`, which every runner checks before each call; children created
 * later by a flagged parent inherit the flag (SUBMIT_CHILD). cancelTree (cancel-tree.ts) calls it
 * a level at a time, each level the children the step before reported: each key is in KEYS.
 * KEYS: inv and calls of each node, in pairs. ARGV: an error JSON or '' (when set and the first
 * node is not terminal, it gets `treeError`: a root whose tree fails, e.g. on `budget_exceeded`,
 * then ends `failed` with it instead of `cancelled`; FINISH reads it; the first error set wins),
 * then the nodes' ids in KEYS' order.
 * Returns {flagged: [id, status, ...] of the nodes that were not terminal, children: every child id
 * their call records name in the same tree}.
 */
export const CANCEL_TREE: LuaScript = {
  lua: `${IS_TERMINAL}
local function live(status)
  return status and not isTerminal(status)
end
if ARGV[1] ~= '' and live(redis.call('HGET', KEYS[1], 'status')) then
  redis.call('HSETNX', KEYS[1], 'treeError', ARGV[1])
end
local flagged, children = {}, {}
for n = 1, #ARGV - 1 do
  local inv, calls = KEYS[2 * n - 1], KEYS[2 * n]
  local status = redis.call('HGET', inv, 'status')
  if live(status) then
    redis.call('HSET', inv, 'cancelRequested', '1')
    table.insert(flagged, ARGV[n + 1])
    table.insert(flagged, status)
  end
  -- A child of another tree is a fork's reused delegation (docs/guides/durability.md): not this tree's to cancel.
  local root = string.sub(ARGV[n + 1], 1, 36)
  for _, text in ipairs(redis.call('HVALS', calls)) do
    local child = string.match(text, '"childId":"([^"]+)"')
    if child and string.sub(child, 1, 36) == root then table.insert(children, child) end
  end
end
return {flagged, children}`,
};
