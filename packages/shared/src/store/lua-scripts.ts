import { EVENT_STREAM_MAXLEN } from '../defaults.js';

/**
 * The Lua steps that change invocation state. Each runs atomically on one tree's slot; every
 * runner write is fenced by the activation epoch (DESIGN §7), so a process that lost its lock
 * cannot write after another took over. Services register them with ioredis `defineCommand`.
 */
export interface LuaScript {
  numberOfKeys: number;
  lua: string;
}

// Appends a `status` event for an invocation to its tree's log (used by the steps below). The
// TypeScript twin is encodeEvent (wire/mesh-event.ts), for events whose caller knows them in full.
// These are built here because whether they happen at all (a status that actually changed) and
// their agent and parentId are only known inside the atomic step; both produce the MeshEvent shape.
const STATUS_EVENT = `
local function statusEvent(inv, events, status, at)
  local e = {invocationId = redis.call('HGET', inv, 'id'), agent = redis.call('HGET', inv, 'agent'),
    type = 'status', at = at, data = {status = status}}
  local parent = redis.call('HGET', inv, 'parentId')
  if parent then e.parentId = parent end
  redis.call('XADD', events, 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', cjson.encode(e))
end
`;

/**
 * Starts an activation. KEYS: inv, calls, events. ARGV: now, runner, nowIso, and for a ReAct agent
 * the first call of a fresh activation ('' when the runner checks the input first), the model's
 * name and the definition hash the runner holds.
 * Returns nil (absent), or {epoch, recovered(0/1), stateFlat, callsFlat, prestarted callId or ''}.
 * A terminal invocation returns epoch 0 and is not changed. An invocation found `running` was
 * abandoned by a runner that crashed: its recovery count goes up.
 * The model call an activation starts with is recorded `started` here, one round trip fewer before
 * it: a fresh ReAct activation's turn 0, or the call a parent named when it parked on the children
 * of a turn of delegations alone (`resumeCall`: BullMQ resumes it once they all finished, and the
 * next step is then that turn's model call). Only where RECORD_CALL would write it and the runner
 * would not refuse: the same definition, not cancelled, before the deadline, no tree budget (whose
 * check needs the root's hash; the runner then records it itself), and not recorded yet.
 */
export const ACTIVATE: LuaScript = {
  numberOfKeys: 3,
  lua: `${STATUS_EVENT}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return nil end
if status == 'succeeded' or status == 'failed' or status == 'cancelled' then
  return {0, 0, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), ''}
end
local recovered = 0
if status == 'running' then
  recovered = 1
  redis.call('HINCRBY', KEYS[1], 'recoveries', 1)
end
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'status', 'running', 'runner', ARGV[2])
if status ~= 'running' then statusEvent(KEYS[1], KEYS[3], 'running', ARGV[3]) end
if not redis.call('HGET', KEYS[1], 'startedAt') then redis.call('HSET', KEYS[1], 'startedAt', ARGV[1]) end
local resume = redis.call('HGET', KEYS[1], 'resumeCall')
if resume then redis.call('HDEL', KEYS[1], 'resumeCall') end
local first = ''
if ARGV[6] then
  if status == 'queued' and ARGV[4] ~= '' and redis.call('EXISTS', KEYS[2]) == 0 then first = ARGV[4]
  elseif status == 'waiting' and resume and redis.call('HEXISTS', KEYS[2], resume) == 0 then first = resume end
end
if first ~= '' and redis.call('HGET', KEYS[1], 'defHash') == ARGV[6]
  and redis.call('HGET', KEYS[1], 'cancelRequested') ~= '1'
  and redis.call('HEXISTS', KEYS[1], 'budget') == 0
  and tonumber(redis.call('HGET', KEYS[1], 'deadline') or '0') > tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[2], first, cjson.encode({v = 1, callId = first, kind = 'model', name = ARGV[5],
    status = 'started', startedAt = ARGV[3], runner = ARGV[2]}))
else
  first = ''
end
return {epoch, recovered, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), first}`,
};

// Adds a model call's tokens to the tree's budget counter (`budgetUsed` on the root's hash) when
// the tree has a budget (DESIGN §13): in the very step that records the call, so exactly once.
const SPEND_BUDGET = `
local function spendBudget(inv, root, prompt, completion)
  local used = tonumber(prompt) + tonumber(completion)
  if used > 0 and redis.call('HEXISTS', inv, 'budget') == 1 then redis.call('HINCRBY', root, 'budgetUsed', used) end
end
`;

/**
 * Writes a call record (and usage) under the activation's epoch, committing the memory writes
 * made since the last record with it. KEYS: inv, calls, events, memory, root inv. ARGV: epoch,
 * callId, recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+, checkCancel ('1'
 * = refuse when the invocation is flagged cancelled or its tree's token budget is spent: a call
 * about to start), then memory writes as key, valueJSON pairs ('' deletes). Returns 1, 0 when
 * fenced out (another activation took over), 2 when cancelled, or 3 when the budget is spent.
 */
export const RECORD_CALL: LuaScript = {
  numberOfKeys: 5,
  lua: `${SPEND_BUDGET}
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if ARGV[8] == '1' then
  if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 2 end
  local budget = redis.call('HGET', KEYS[1], 'budget')
  if budget and tonumber(redis.call('HGET', KEYS[5], 'budgetUsed') or '0') >= tonumber(budget) then return 3 end
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if ARGV[4] ~= '' then redis.call('XADD', KEYS[3], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[4]) end
if ARGV[5] ~= '0' then redis.call('HINCRBY', KEYS[1], 'modelCalls', ARGV[5]) end
if ARGV[6] ~= '0' then redis.call('HINCRBY', KEYS[1], 'promptTokens', ARGV[6]) end
if ARGV[7] ~= '0' then redis.call('HINCRBY', KEYS[1], 'completionTokens', ARGV[7]) end
spendBudget(KEYS[1], KEYS[5], ARGV[6], ARGV[7])
for i = 9, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[4], ARGV[i]) else redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]) end
end
return 1`,
};

/**
 * Submits a delegation: records the parent's sub-agent call `started` with its child id and
 * creates the child invocation, in one step. KEYS: parent inv, parent calls, child inv, events.
 * ARGV: epoch, callId, recordJSON, eventJSON, ...child hash fields.
 * Returns 1 (submitted), 2 (child existed already: a re-run), or 0 (fenced out).
 */
export const SUBMIT_CHILD: LuaScript = {
  numberOfKeys: 4,
  lua: `
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
local existing = redis.call('HGET', KEYS[2], ARGV[2])
-- An approved delegation (DESIGN §13) is submitted now: its record becomes started.
if not existing or string.find(existing, '"status":"approved"', 1, true) then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end
if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
redis.call('HSET', KEYS[3], unpack(ARGV, 5))
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then redis.call('HSET', KEYS[3], 'cancelRequested', '1') end
if ARGV[4] ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[4]) end
return 1`,
};

/**
 * Sets `waiting` before an activation parks (or `running` again when it did not need to), under
 * its epoch, so the next activation can tell a park from a crash. KEYS: inv, events.
 * ARGV: epoch, status, nowIso, optionally the id of the job that parks for an approval
 * (`approvalJob`: whoever decides wakes that job; '' for none), and the model call the activation
 * resuming it starts with (`resumeCall`, see ACTIVATE). Returns 1, or 0 when fenced out.
 */
export const PARK: LuaScript = {
  numberOfKeys: 2,
  lua: `${STATUS_EVENT}
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[2] then
  redis.call('HSET', KEYS[1], 'status', ARGV[2])
  statusEvent(KEYS[1], KEYS[2], ARGV[2], ARGV[3])
end
if ARGV[4] and ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'approvalJob', ARGV[4]) end
if ARGV[5] then redis.call('HSET', KEYS[1], 'resumeCall', ARGV[5]) else redis.call('HDEL', KEYS[1], 'resumeCall') end
return 1`,
};

/**
 * Asks for a call's approval (DESIGN §13): records the call (`awaiting_approval`) unless it has a
 * record, and its request in the invocation's hash with the `approval_requested` event, once
 * (`approvalsPending` counts the undecided ones, so a sweep reads one field).
 * KEYS: inv, calls, events. ARGV: epoch, callId, recordJSON, requestJSON, eventJSON.
 * Returns 1, 0 when fenced out, or 2 when the invocation is flagged cancelled.
 */
export const REQUEST_APPROVAL: LuaScript = {
  numberOfKeys: 3,
  lua: `
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 2 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end
if redis.call('HSETNX', KEYS[1], 'approval:' .. ARGV[2], ARGV[4]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'approvalsPending', 1)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[5])
end
return 1`,
};

/**
 * Writes the terminal state once (compare-and-set), completes the parent's call record when the
 * invocation is a delegation, adds its tree usage to its parent's (`sub…` fields: each child's
 * subtree is rolled up exactly once, DESIGN §13), sets the retention TTL, appends the event and
 * wakes the waiters of a root (on the done channel; nothing waits on a child there). A root whose
 * tree was failed (`treeError`, set by CANCEL_TREE) ends `failed` with that error, not `cancelled`.
 * KEYS: inv, calls, memory, events, parent calls, parent inv (both its own when a root), root inv.
 * ARGV: epoch ('' = unfenced), status,
 * outputJSON (''), errorJSON (''), finishedAt, parentCallId (''), parentStatus (a cancelled
 * child leaves its parent's record `cancelled`: a failed delegation with reason cancelled, with
 * no terminal failure recorded), parentContent,
 * parentErrorJSON, finishedAtIso, eventJSON, retentionSeconds, doneChannel, parentEventJSON.
 * A success appends its `output` event, then a terminal `status` event; a failure's eventJSON is that.
 * Optional ARGV 15–20: a call record of this invocation written first, as RECORD_CALL would (callId,
 * recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+): the model reply that led
 * here travels with the finish, one step instead of two.
 * Returns 1 when written, 0 when already terminal or fenced out.
 */
export const FINISH: LuaScript = {
  numberOfKeys: 7,
  lua: `${STATUS_EVENT}${SPEND_BUDGET}
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status == 'succeeded' or status == 'failed' or status == 'cancelled' then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if ARGV[15] then
  redis.call('HSET', KEYS[2], ARGV[15], ARGV[16])
  if ARGV[17] ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[17]) end
  if ARGV[18] ~= '0' then redis.call('HINCRBY', KEYS[1], 'modelCalls', ARGV[18]) end
  if ARGV[19] ~= '0' then redis.call('HINCRBY', KEYS[1], 'promptTokens', ARGV[19]) end
  if ARGV[20] ~= '0' then redis.call('HINCRBY', KEYS[1], 'completionTokens', ARGV[20]) end
  spendBudget(KEYS[1], KEYS[7], ARGV[19], ARGV[20])
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
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'output', ARGV[3]) end
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
      if ARGV[8] ~= '' then r.content = ARGV[8] end
      if ARGV[9] ~= '' then r.error = cjson.decode(ARGV[9]) end
      redis.call('HSET', KEYS[5], ARGV[6], cjson.encode(r))
      if ARGV[14] ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', ARGV[14]) end
    end
  end
end
local ttl = tonumber(ARGV[12])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
-- Only roots have waiters (a request waiting on invoke): a child's end wakes no gateway.
if redis.call('HGET', KEYS[1], 'parentId') == false then
  redis.call('EXPIRE', KEYS[4], ttl)
  redis.call('PUBLISH', ARGV[13], redis.call('HGET', KEYS[1], 'id'))
end
return 1`,
};

/**
 * Flags an invocation and its whole subtree (never its ancestors) as cancelled, walking the child
 * ids in the call records. Children created later inherit the flag (SUBMIT_CHILD).
 * KEYS: the target's inv key. ARGV: the tree's key prefix (`<prefix>:{<root>}:`, see keys.ts),
 * the target's id, and optionally an error JSON: the target (a root whose tree fails, e.g. on
 * `budget_exceeded`) then ends `failed` with it instead of `cancelled` (FINISH reads `treeError`;
 * the first error set wins). Returns the flagged invocations that were not terminal: {id, status, ...}.
 */
export const CANCEL_TREE: LuaScript = {
  numberOfKeys: 1,
  lua: `
local target = redis.call('HGET', KEYS[1], 'status')
if ARGV[3] and target and target ~= 'succeeded' and target ~= 'failed' and target ~= 'cancelled' then
  redis.call('HSETNX', KEYS[1], 'treeError', ARGV[3])
end
local out = {}
local queue = {ARGV[2]}
local i = 1
while queue[i] do
  local id = queue[i]
  i = i + 1
  local inv = ARGV[1] .. 'inv:' .. id
  local status = redis.call('HGET', inv, 'status')
  if status and status ~= 'succeeded' and status ~= 'failed' and status ~= 'cancelled' then
    redis.call('HSET', inv, 'cancelRequested', '1')
    table.insert(out, id)
    table.insert(out, status)
  end
  -- The same walk as InvocationReader.subtreeIds (gateway), which only reads and needs no
  -- atomicity; this one must flag every node in one step so no child escapes the cancel.
  for _, text in ipairs(redis.call('HVALS', ARGV[1] .. 'calls:' .. id)) do
    local child = string.match(text, '"childId":"([^"]+)"')
    if child then table.insert(queue, child) end
  end
end
return out`,
};

/**
 * Commits a code agent's memory writes under the activation's epoch. KEYS: inv, memory.
 * ARGV: epoch, then key, valueJSON pairs ('' deletes). Returns 1, or 0 when fenced out.
 */
export const COMMIT_MEMORY: LuaScript = {
  numberOfKeys: 2,
  lua: `
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[2], ARGV[i]) else redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
end
return 1`,
};

/**
 * Discards call records (a code agent whose next call does not match its record) under the
 * activation's epoch. KEYS: inv, calls. ARGV: epoch, ...callIds. Returns 1, or 0 when fenced out.
 */
export const DISCARD_CALLS: LuaScript = {
  numberOfKeys: 2,
  lua: `
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if #ARGV > 1 then redis.call('HDEL', KEYS[2], unpack(ARGV, 2)) end
return 1`,
};
