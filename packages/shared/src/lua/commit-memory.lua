-- COMMIT_MEMORY: commits a code agent's memory writes under the activation's epoch.
-- KEYS: inv, memory.
-- ARGV: epoch, then key, valueJSON pairs ('' deletes).
-- Returns 1, or 0 when fenced out.
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[2], ARGV[i]) else redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
end
return 1
