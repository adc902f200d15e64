-- Put ahead of BullMQ's take steps (take-step.ts): when the step's last argument is the mark and
-- settings a worker appended, `meshTakeActivation(jobKey)` activates the invocation of the job
-- taken (the activate step's own function, on the keys the job's data names) and its reply rides
-- back with the job. The job's data must be a mesh job of the worker's agent; anything else is
-- left to the processor (which refuses it), as is every take whose settings are absent. A failure
-- inside activate answers {'error', message}: the processor fails as activate would.
-- KEYS, ARGV: BullMQ's moveToActive's, then the settings (TAKE_MARK and JSON: now, nowIso, runner,
-- agent, keys as prefix/suffix parts, react).
--- @include "activate-function"
--- @const TAKE_MARK
local meshTake
do
  local last = ARGV[#ARGV] -- BullMQ's own callers append nothing
  if type(last) == 'string' and string.sub(last, 1, #TAKE_MARK) == TAKE_MARK then
    meshTake = cjson.decode(string.sub(last, #TAKE_MARK + 1))
  end
end
local function meshKey(parts, root, id)
  local key = parts[1] .. root .. parts[2]
  if parts[3] then key = key .. id .. parts[3] end
  return key
end
local function meshTakeActivation(jobKey)
  if not meshTake then return nil end
  local ok, data = pcall(cjson.decode, redis.call('HGET', jobKey, 'data') or 'null')
  if not ok or type(data) ~= 'table' or data.v ~= 1 or data.agent ~= meshTake.agent
    or type(data.invocationId) ~= 'string' or type(data.rootId) ~= 'string' then return nil end
  local argv = {meshTake.now, meshTake.runner, meshTake.nowIso}
  local react = meshTake.react
  if type(react) == 'table' then
    local child = data.invocationId ~= data.rootId and react.inputSchema
    argv[4], argv[5], argv[6], argv[7] = react.firstCallId, react.model, react.defHash, child and '1' or '0'
  end
  local k = meshTake.keys
  local done, reply = pcall(meshActivate, meshKey(k.inv, data.rootId, data.invocationId),
    meshKey(k.calls, data.rootId, data.invocationId), meshKey(k.events, data.rootId),
    meshKey(k.watch, data.rootId), argv)
  if not done then return {'error', tostring(reply)} end
  return reply or false
end
