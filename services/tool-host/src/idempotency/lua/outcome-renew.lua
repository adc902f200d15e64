-- Renews a running tool call's lease, while its token holds it.
-- KEYS: lease.
-- ARGV: token, leaseMs.
-- Returns 1 when renewed, 0 when the lease is gone or another's.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
