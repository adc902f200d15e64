-- READ_FORK_SOURCE: reads the invocation a fork starts from (docs/guides/durability.md), in one
-- step, within bounds: its state, and its call records with the tree texts they refer to, unless
-- there are more than ARGV[1] records or they hold more than ARGV[2] bytes, texts included (then
-- none are read: a fork refuses them).
-- KEYS: inv, calls, the tree's texts.
-- ARGV: maxRecords, maxBytes.
-- Returns {stateFlat, callsFlat, count, bytes, textsFlat}: `bytes` summed only within the count
-- bound.
--- @include "texts-of"
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
return {state, calls, count, bytes, texts}
