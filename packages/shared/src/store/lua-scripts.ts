import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import { IS_TERMINAL, SPEND_BUDGET, STATUS_EVENT, STORE_TEXTS, WRITE_RECORD } from './lua-fragments.js';

/**
 * The Lua steps that change invocation state. Each runs atomically on one tree's slot; every
 * runner write is fenced by the activation epoch (docs/architecture/durability-and-fencing.md), so a process that lost its lock
 * cannot write after another took over. Services register them with ioredis `defineCommand`.
 */
export interface LuaScript {
  /** Absent for a step whose number of keys varies: its caller passes the count first. */
  numberOfKeys?: number;
  lua: string;
}

/**
 * Starts an activation. KEYS: inv, calls, events. ARGV: now, runner, nowIso, and for a ReAct agent
 * the first call of a fresh activation, the model's name, the definition hash the runner holds,
 * and '1' when it is a child that checks its input first: its fresh call is then recorded only if
 * its parent checked that input already (`inputChecked` in its hash).
 * Returns nil (absent), or {epoch, recovered(0/1), stateFlat, callsFlat, prestarted callId or ''}.
 * A terminal invocation returns epoch 0 and is not changed. An invocation found `running` was
 * abandoned by a runner that crashed: its recovery count goes up.
 * The model call an activation starts with is recorded `started` here, one round trip fewer before
 * it: a fresh ReAct activation's turn 0, or the call a parent named when it parked on the children
 * of a turn of delegations alone (`resumeCall`: BullMQ resumes it once they all finished, and the
 * next step is then that turn's model call). Only where RECORD_CALL would write it and the runner
 * would not refuse: the same definition, not cancelled, before the deadline, no tree budget (whose
 * check needs the root's hash; the runner then records it itself), and not recorded yet.
 * The step is the function `meshActivate(inv, calls, events, argv)` (ACTIVATE_FUNCTION), so that
 * the runner's take of a job from its queue can run it in the same step (fetch-scripts.ts).
 */
export const ACTIVATE_FUNCTION = `${STATUS_EVENT}${IS_TERMINAL}
local function meshActivate(inv, calls, events, argv)
  local status = redis.call('HGET', inv, 'status')
  if not status then return nil end
  if isTerminal(status) then
    return {0, 0, redis.call('HGETALL', inv), redis.call('HGETALL', calls), ''}
  end
  local recovered = 0
  if status == 'running' then
    recovered = 1
    redis.call('HINCRBY', inv, 'recoveries', 1)
  end
  local epoch = redis.call('HINCRBY', inv, 'epoch', 1)
  redis.call('HSET', inv, 'status', 'running', 'runner', argv[2])
  if status ~= 'running' then statusEvent(inv, events, 'running', argv[3]) end
  if not redis.call('HGET', inv, 'startedAt') then redis.call('HSET', inv, 'startedAt', argv[1]) end
  local resume = redis.call('HGET', inv, 'resumeCall')
  if resume then redis.call('HDEL', inv, 'resumeCall') end
  local first = ''
  if argv[6] then
    local checked = argv[7] ~= '1' or redis.call('HGET', inv, 'inputChecked') == '1'
    if status == 'queued' and argv[4] ~= '' and checked and redis.call('EXISTS', calls) == 0 then first = argv[4]
    elseif status == 'waiting' and resume and redis.call('HEXISTS', calls, resume) == 0 then first = resume end
  end
  if first ~= '' and redis.call('HGET', inv, 'defHash') == argv[6]
    and redis.call('HGET', inv, 'cancelRequested') ~= '1'
    and redis.call('HEXISTS', inv, 'budget') == 0
    and tonumber(redis.call('HGET', inv, 'deadline') or '0') > tonumber(argv[1]) then
    redis.call('HSET', calls, first, cjson.encode({v = 1, callId = first, kind = 'model', name = argv[5],
      status = 'started', startedAt = argv[3], runner = argv[2]}))
  else
    first = ''
  end
  return {epoch, recovered, redis.call('HGETALL', inv), redis.call('HGETALL', calls), first}
end
`;

export const ACTIVATE: LuaScript = {
  numberOfKeys: 3,
  lua: `${ACTIVATE_FUNCTION}return meshActivate(KEYS[1], KEYS[2], KEYS[3], ARGV)`,
};

/**
 * Writes a call record (and usage) under the activation's epoch, committing the memory writes
 * made since the last record with it. KEYS: inv, calls, events, memory, root inv, the tree's texts.
 * ARGV: epoch, callId, recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+,
 * checkCancel ('1' = refuse when the invocation is flagged cancelled or its tree's token budget is
 * spent: a call about to start), the tree texts the record refers to (their count, then ref, text
 * pairs: STORE_TEXTS), then memory writes as key, valueJSON pairs ('' deletes). Returns 1, 0 when
 * fenced out (another activation took over), 2 when cancelled, or 3 when the budget is spent.
 */
export const RECORD_CALL: LuaScript = {
  numberOfKeys: 6,
  lua: `${SPEND_BUDGET}${WRITE_RECORD}${STORE_TEXTS}
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if ARGV[8] == '1' then
  if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 2 end
  local budget = redis.call('HGET', KEYS[1], 'budget')
  if budget and tonumber(redis.call('HGET', KEYS[5], 'budgetUsed') or '0') >= tonumber(budget) then return 3 end
end
local at = storeTexts(KEYS[6], KEYS[5], ARGV, 9)
writeRecord(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
for i = at, #ARGV, 2 do
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
-- An approved delegation (docs/guides/approvals-and-budgets.md) is submitted now: its record becomes started.
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
 * Asks for a call's approval (docs/guides/approvals-and-budgets.md): records the call (`awaiting_approval`) unless it has a
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
