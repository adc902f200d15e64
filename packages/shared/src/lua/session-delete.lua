-- SESSION_DELETE: deletes a session: its binding, history and lists.
-- KEYS: meta, invocations, queue, messages.
-- ARGV: createdAt (only the session that was read goes; one created again since stays).
-- Returns the ids that were still waiting in its queue (the caller cancels them), or false when
-- the session is gone or another.
if redis.call('HGET', KEYS[1], 'createdAt') ~= ARGV[1] then return false end
local waiting = redis.call('LRANGE', KEYS[3], 0, -1)
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return waiting
