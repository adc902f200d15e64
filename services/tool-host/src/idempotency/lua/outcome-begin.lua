-- Admits a tool call under its Idempotency-Key (outcome-store.ts). The record is a hash: `tool`
-- and `args` (the scope, set when the call starts: the 'started' marker) and `outcome` (JSON, once
-- it ended). A key used with another scope is 'reused'.
-- KEYS: record, lease.
-- ARGV: token, leaseMs, ttlSeconds, rerunInDoubt ('1' for idempotent tools), tool, argsHash.
-- Returns {'run'} (the lease taken), {'done', outcomeJSON}, {'busy'}, {'in_doubt'} or {'reused'}.
local rec = redis.call('HMGET', KEYS[1], 'tool', 'args', 'outcome')
if rec[1] then
  if rec[1] ~= ARGV[5] or rec[2] ~= ARGV[6] then return {'reused'} end
  if rec[3] then return {'done', rec[3]} end
  if redis.call('EXISTS', KEYS[2]) == 1 then return {'busy'} end
  if ARGV[4] ~= '1' then return {'in_doubt'} end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'tool', ARGV[5], 'args', ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'run'}
