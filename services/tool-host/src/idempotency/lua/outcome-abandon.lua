-- Lets a tool call's lease go without an outcome (the call was aborted): the key stays in doubt.
-- KEYS: lease.
-- ARGV: token.
-- Returns 1.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
