-- statusEvent(inv, events, status, at): appends a `status` event for an invocation to its tree's
-- log. The TypeScript twin is encodeEvent (wire/mesh-event.ts), for events whose caller knows them
-- in full. These are built here because whether they happen at all (a status that actually
-- changed) and their agent and parentId are only known inside the atomic step; both produce the
-- MeshEvent shape.
--- @const EVENT_STREAM_MAXLEN
local function statusEvent(inv, events, status, at)
  local f = redis.call('HMGET', inv, 'id', 'agent', 'parentId', 'rootId', 'depth', 'parentCallId')
  local e = {invocationId = f[1], agent = f[2], type = 'status', at = at, data = {status = status},
    rootId = f[4] or f[1], depth = tonumber(f[5] or '0')}
  if f[3] then e.parentId = f[3] end
  if f[6] then e.parentCallId = f[6] end
  redis.call('XADD', events, 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', cjson.encode(e))
end
