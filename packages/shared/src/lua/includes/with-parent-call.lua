-- withParentCall(inv, event): an event's JSON (an object, encoded by encodeEvent) with the
-- `parentCallId` stored on `inv`'s hash added, when it has one: for an event about an invocation
-- whose writer does not know it. Spliced, not decoded and encoded again: cjson would turn an empty
-- array of the event's data into an object and escape every '/'.
local function withParentCall(inv, event)
  local callId = redis.call('HGET', inv, 'parentCallId')
  if not callId then return event end
  return string.sub(event, 1, -2) .. ',"parentCallId":' .. cjson.encode(callId) .. '}'
end
