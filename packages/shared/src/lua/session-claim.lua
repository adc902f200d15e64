-- SESSION_CLAIM: binds a new invocation to a session (docs/guides/sessions.md), creating the
-- session on first use. Each session step touches the four keys of one session, which share the
-- session's own hash tag: never an invocation's keys (those carry their tree's tag).
-- KEYS: meta, invocations, queue, messages.
-- ARGV: sessionId, agent, owner ('' = none), anyOwner ('1' = the caller sees every session: auth
-- is off), invocationId, multitask, now, ttl, maxInvocations, maxQueued, historyBytes.
-- Returns {'not_found'} (another key's), {'conflict', agent}, {'busy', current} (reject),
-- {'full', current}, {'start', ...messagesJson} (nothing runs: the invocation is now the
-- session's current one; its history, the newest exchanges within historyBytes),
-- {'enqueue', current} (it waits at the end of the queue) or {'interrupt', current, superseded}
-- (it waits at the queue's head). Only the newest interrupt waits to start: the meta's
-- `interrupting` names it, and one bound while another still waits supersedes it (`superseded`,
-- '' when none: the caller cancels it as it cancels `current`), so interrupts bound at once end
-- the same whatever the timing: the last bound runs, every earlier one ends cancelled. A retried
-- bind of an invocation still queued answers {'queued', current}.
--- @include "touch"
--- @include "bounded-tail"
local current = ''
if redis.call('EXISTS', KEYS[1]) == 1 then
  local h = redis.call('HMGET', KEYS[1], 'owner', 'agent', 'current')
  if ARGV[4] ~= '1' and (h[1] or '') ~= ARGV[3] then return {'not_found'} end
  if h[2] ~= ARGV[2] then return {'conflict', h[2]} end
  current = h[3] or ''
else
  redis.call('HSET', KEYS[1], 'v', '1', 'id', ARGV[1], 'agent', ARGV[2], 'owner', ARGV[3],
    'createdAt', ARGV[7], 'updatedAt', ARGV[7], 'current', '')
end
local inv = ARGV[5]
local result
if current == inv then
  result = {'start'}
elseif redis.call('LPOS', KEYS[3], inv) then
  result = {'queued', current}
elseif current == '' then
  redis.call('HSET', KEYS[1], 'current', inv, 'currentSince', ARGV[7])
  redis.call('RPUSH', KEYS[2], inv)
  result = {'start'}
elseif ARGV[6] == 'reject' then
  return {'busy', current}
elseif redis.call('LLEN', KEYS[3]) >= tonumber(ARGV[10]) then
  return {'full', current}
else
  if ARGV[6] == 'interrupt' then
    result = {'interrupt', current, redis.call('HGET', KEYS[1], 'interrupting') or ''}
    redis.call('LPUSH', KEYS[3], inv)
    redis.call('HSET', KEYS[1], 'interrupting', inv)
  else
    redis.call('RPUSH', KEYS[3], inv)
    result = {'enqueue', current}
  end
  redis.call('RPUSH', KEYS[2], inv)
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[9]), -1)
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[7])
touch(tonumber(ARGV[8]))
if result[1] == 'start' then
  for _, m in ipairs(boundedTail(KEYS[4], tonumber(ARGV[11]))) do table.insert(result, m) end
end
return result
