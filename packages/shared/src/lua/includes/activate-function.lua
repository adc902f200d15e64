-- meshActivate(inv, calls, events, watch, argv): the activate step as a function, so that the
-- runner's take of a job from its queue can run it in the same step (queue fast path:
-- take-prelude.lua). See activate.lua for its arguments and reply.
--- @include "status-event"
--- @include "is-terminal"
local function meshActivate(inv, calls, events, watch, argv)
  local status = redis.call('HGET', inv, 'status')
  if not status then return nil end
  if isTerminal(status) then
    return {0, 0, redis.call('HGETALL', inv), redis.call('HGETALL', calls), '', 0}
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
  return {epoch, recovered, redis.call('HGETALL', inv), redis.call('HGETALL', calls), first,
    redis.call('EXISTS', watch)}
end
