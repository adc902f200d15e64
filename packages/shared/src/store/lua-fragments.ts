import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import { TERMINAL_STATUSES } from '../wire/invocation-view.js';

// Appends a `status` event for an invocation to its tree's log (for the steps of lua-scripts.ts and
// ending-scripts.ts). The TypeScript twin is encodeEvent (wire/mesh-event.ts), for events whose
// caller knows them in full.
// These are built here because whether they happen at all (a status that actually changed) and
// their agent and parentId are only known inside the atomic step; both produce the MeshEvent shape.
export const STATUS_EVENT = `
local function statusEvent(inv, events, status, at)
  local f = redis.call('HMGET', inv, 'id', 'agent', 'parentId', 'rootId', 'depth', 'parentCallId')
  local e = {invocationId = f[1], agent = f[2], type = 'status', at = at, data = {status = status},
    rootId = f[4] or f[1], depth = tonumber(f[5] or '0')}
  if f[3] then e.parentId = f[3] end
  if f[6] then e.parentCallId = f[6] end
  redis.call('XADD', events, 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', cjson.encode(e))
end
`;

// An event's JSON (an object, encoded by encodeEvent) with the `parentCallId` stored on `inv`'s
// hash added, when it has one: for an event about an invocation whose writer does not know it.
export const WITH_PARENT_CALL = `
local function withParentCall(inv, event)
  local callId = redis.call('HGET', inv, 'parentCallId')
  if not callId then return event end
  return string.sub(event, 1, -2) .. ',"parentCallId":' .. cjson.encode(callId) .. '}'
end
`;

// Whether an invocation's status is terminal (TERMINAL_STATUSES, the TypeScript side's list): nil,
// an invocation that does not exist, is not.
export const IS_TERMINAL = `
local function isTerminal(status)
  return ${TERMINAL_STATUSES.map((s) => `status == '${s}'`).join(' or ')}
end
`;

// Now in milliseconds by Redis's clock (TIME), for steps that compare times written from several
// hosts, whose own clocks may disagree.
export const REDIS_NOW_MS = `
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

// Adds a model call's tokens to the tree's budget counter (`budgetUsed` on the root's hash) when
// the tree has a budget (docs/guides/approvals-and-budgets.md): in the very step that records the call, so exactly once.
export const SPEND_BUDGET = `
local function spendBudget(inv, root, prompt, completion)
  local used = tonumber(prompt) + tonumber(completion)
  if used > 0 and redis.call('HEXISTS', inv, 'budget') == 1 then redis.call('HINCRBY', root, 'budgetUsed', used) end
end
`;

// Writes a call record and what comes with it: its event, the usage counters and the tree's budget
// counter (after SPEND_BUDGET). RECORD_CALL's step, and FINISH's for the reply that travels with it.
export const WRITE_RECORD = `
local function writeRecord(inv, calls, events, root, callId, record, event, modelCalls, prompt, completion)
  redis.call('HSET', calls, callId, record)
  if event ~= '' then redis.call('XADD', events, 'MAXLEN', '~', '${EVENT_STREAM_MAXLEN}', '*', 'e', event) end
  if modelCalls ~= '0' then redis.call('HINCRBY', inv, 'modelCalls', modelCalls) end
  if prompt ~= '0' then redis.call('HINCRBY', inv, 'promptTokens', prompt) end
  if completion ~= '0' then redis.call('HINCRBY', inv, 'completionTokens', completion) end
  spendBudget(inv, root, prompt, completion)
end
`;

// Stores a step's tree texts (store/tree-texts.ts) in the tree's texts hash, each once: ARGV from
// `from` holds their count, then ref, text pairs. While the root lives the hash lives as long as
// the root's hash (deadline + retention from its creation); FINISH extends it once the root ended.
// Returns the index of the argument after them.
export const STORE_TEXTS = `
local function storeTexts(texts, root, argv, from)
  local n = tonumber(argv[from] or '0')
  for i = from + 1, from + 2 * n, 2 do redis.call('HSETNX', texts, argv[i], argv[i + 1]) end
  if n > 0 then
    local want = redis.call('PTTL', root)
    if want > redis.call('PTTL', texts) then redis.call('PEXPIRE', texts, want) end
  end
  return from + 1 + 2 * n
end
`;

// The tree texts an invocation's state and call records (flat HGETALL replies) refer to, read from
// the tree's texts hash: a flat list of ref, text (a text gone is left out). A ref in a record's
// JSON can only be a field: inside a JSON string every quote is escaped (store/tree-texts.ts).
export const TEXTS_OF = `
local function textsOf(texts, state, calls)
  local out, seen = {}, {}
  local function add(ref)
    if seen[ref] then return end
    seen[ref] = true
    local text = redis.call('HGET', texts, ref)
    if text then
      table.insert(out, ref)
      table.insert(out, text)
    end
  end
  for i = 1, #state, 2 do
    if state[i] == 'outputRef' or state[i] == 'outputTextRef' then add(state[i + 1]) end
  end
  for i = 2, #calls, 2 do
    for ref in string.gmatch(calls[i], '"contentRef":"(%x+)"') do add(ref) end
  end
  return out
end
`;
