-- RECORD_CALL: writes a call record (and usage) under the activation's epoch, committing the
-- memory writes made since the last record with it.
-- KEYS: inv, calls, events, memory, root inv, the tree's texts.
-- ARGV: epoch, callId, recordJSON, eventJSON, modelCalls+, promptTokens+, completionTokens+,
-- checkCancel ('1' = refuse when the invocation is flagged cancelled or its tree's token budget is
-- spent: a call about to start), the tree texts the record refers to (their count, then ref, text
-- pairs: storeTexts), then memory writes as key, valueJSON pairs ('' deletes).
-- Returns 1, 0 when fenced out (another activation took over), 2 when cancelled, or 3 when the
-- budget is spent.
--- @include "write-record"
--- @include "store-texts"
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
return 1
