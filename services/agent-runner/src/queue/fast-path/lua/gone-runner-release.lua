-- A holder that stops watching gives the lease up (gone-runner-lease.lua), so another runner takes
-- it at its next look.
-- KEYS: the lease.
-- ARGV: the holder.
-- Returns 0.
if redis.call("HGET", KEYS[1], "holder") == ARGV[1] then redis.call("DEL", KEYS[1]) end
return 0
