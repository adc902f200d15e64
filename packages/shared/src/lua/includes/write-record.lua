-- writeRecord(...): writes a call record and what comes with it: its event, the usage counters and
-- the tree's budget counter (spendBudget). record-call's step, and finish's for the reply that
-- travels with it.
--- @const EVENT_STREAM_MAXLEN
--- @include "spend-budget"
local function writeRecord(inv, calls, events, root, callId, record, event, modelCalls, prompt, completion)
  redis.call('HSET', calls, callId, record)
  if event ~= '' then redis.call('XADD', events, 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', event) end
  if modelCalls ~= '0' then redis.call('HINCRBY', inv, 'modelCalls', modelCalls) end
  if prompt ~= '0' then redis.call('HINCRBY', inv, 'promptTokens', prompt) end
  if completion ~= '0' then redis.call('HINCRBY', inv, 'completionTokens', completion) end
  spendBudget(inv, root, prompt, completion)
end
