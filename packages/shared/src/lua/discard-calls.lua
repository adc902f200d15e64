-- DISCARD_CALLS: discards call records (a code agent whose next call does not match its record)
-- under the activation's epoch.
-- KEYS: inv, calls.
-- ARGV: epoch, ...callIds.
-- Returns 1, or 0 when fenced out.
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if #ARGV > 1 then redis.call('HDEL', KEYS[2], unpack(ARGV, 2)) end
return 1
