-- FINISH: writes the terminal state once (compare-and-set), completes the parent's call record
-- when the invocation is a delegation, adds its tree usage to its parent's (`sub...` fields: each
-- child's subtree is rolled up exactly once, docs/guides/approvals-and-budgets.md), sets the
-- retention TTL, appends the event and wakes the waiters of a root (on the done channel: `id`, or
-- `id\n[stateFlat, callsFlat]` up to DONE_MESSAGE_MAX_BYTES, the answer read-invocation would
-- give; nothing waits on a child there). A root whose tree was failed (`treeError`, set by
-- cancel-tree) ends `failed` with that error, not `cancelled`.
-- KEYS: inv, calls, memory, events, parent calls, parent inv (both its own when a root), root inv,
-- the tree's texts.
-- ARGV: epoch ('' = unfenced), status, output (its hash field's value, ''), errorJSON (''),
-- finishedAt, parentCallId (''), parentStatus (a cancelled child leaves its parent's record
-- `cancelled`: a failed delegation with reason cancelled, with no terminal failure recorded),
-- parentFieldsJSON (what the parent's record gets: `content`, or `contentRef` and `contentCut`;
-- ''), parentErrorJSON, finishedAtIso, eventJSON, retentionSeconds, doneChannel, parentEventJSON
-- (its `parentCallId`, on the parent's hash only, is added here), the output's hash field
-- (`output`, or a tree text's `outputRef` / `outputTextRef`: store/tree-texts.ts), then the tree
-- texts the step stores (their count, then ref, text pairs: storeTexts).
-- A success appends its `output` event, then a terminal `status` event; a failure's eventJSON is
-- that. Optional, after the texts: a call record of this invocation written first, as record-call
-- would (callId, recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+): the model
-- reply that led here travels with the finish, one step instead of two.
-- The tree's texts get the retention TTL once the root has ended (this step, or before it): they
-- outlive every key that refers to them, each of which got its TTL at its own finish.
-- Returns 1 when written, 0 when already terminal or fenced out, and the tree's error (JSON) when
-- a cancellation was written as the tree's failure, so the runner logs and counts what was written.
--- @include "status-event"
--- @include "write-record"
--- @include "is-terminal"
--- @include "with-parent-call"
--- @include "store-texts"
--- @const EVENT_STREAM_MAXLEN
--- @const DONE_MESSAGE_MAX_BYTES
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
if event ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', event) end
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
        redis.call('XADD', KEYS[4], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', withParentCall(KEYS[6], ARGV[14]))
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
-- message carries what read-invocation would answer when it is small, so a waiter need not read.
if redis.call('HGET', KEYS[1], 'parentId') == false then
  redis.call('EXPIRE', KEYS[4], ttl)
  local id = redis.call('HGET', KEYS[1], 'id')
  local state, calls = redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])
  -- A view that refers to tree texts is past the bound with them: the waiter reads it.
  local size = ARGV[15] == 'output' and 0 or DONE_MESSAGE_MAX_BYTES + 1
  for _, v in ipairs(state) do size = size + #v end
  for _, v in ipairs(calls) do
    size = size + #v
    if string.find(v, '"contentRef":"', 1, true) then size = size + DONE_MESSAGE_MAX_BYTES + 1 end
  end
  if size <= DONE_MESSAGE_MAX_BYTES then
    redis.call('PUBLISH', ARGV[13], id .. '\n' .. cjson.encode({state, calls}))
  else
    redis.call('PUBLISH', ARGV[13], id)
  end
end
if final ~= ARGV[2] then return err end
return 1
