-- DECIDE_APPROVAL: decides a pending approval (docs/guides/approvals-and-budgets.md), in one step
-- on the tree's keys: the decision is written once, and the call record goes from
-- `awaiting_approval` to `approved`, or to `rejected` with its tool message.
-- KEYS: inv, calls.
-- ARGV: callId, approved ('1'/'0'), decisionJSON, contentJSON (the rejection's tool message as a
-- JSON string), finishedAtIso.
-- Returns 0 (no such approval), 1 (decided the same way before), 2 (decided otherwise before),
-- 3 (decided now), 4 (the invocation ended undecided).
-- The record's JSON is spliced, not decoded and encoded again: cjson would turn its empty arrays
-- into objects and escape every '/'.
--- @include "is-terminal"
if not redis.call('HGET', KEYS[1], 'approval:' .. ARGV[1]) then return 0 end
local prev = redis.call('HGET', KEYS[1], 'decision:' .. ARGV[1])
if prev then
  -- decisionJSON starts with {"approved":...; a reason cannot hold an unescaped quote.
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
return 3
