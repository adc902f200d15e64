-- The lease of the runner that takes an agent's jobs first (affinity.ts): it blocks on the queue's
-- marker, while the other runners hosting the agent stand by on the queue's wake-up set.
-- KEYS: pairs, one per queue: its lease, its wake-up set.
-- ARGV[1]: the runner. ARGV[2]: the lease's length (ms). ARGV[3]: the step:
--   "claim": the first queue's lease, where the runner holds it or nobody does, is the runner's
--     (renewed or taken), and so is every other queue's that nobody holds: a runner that takes one
--     agent's jobs takes the others' too (a parent's and its children's runs stay on one runner);
--     where another runner holds the first, nothing changes and only its holder is returned;
--   "renew": renewed where the runner holds it;
--   "peek": nothing changes (a runner short of slots, or leaving, takes no lease);
--   "release": given up where ARGV[1] holds it, and its wake-up set, so a runner standing by takes over.
-- Returns each queue's holder after the step, "" where none.
local out = {}
local claiming = ARGV[3] == "claim"
for i = 1, #KEYS, 2 do
  local lease, wake = KEYS[i], KEYS[i + 1]
  local holder = redis.call("GET", lease)
  if holder == ARGV[1] then
    if ARGV[3] == "release" then
      redis.call("DEL", lease)
      redis.call("ZADD", wake, 0, "wake")
      holder = false
    elseif ARGV[3] ~= "peek" then
      redis.call("PEXPIRE", lease, ARGV[2])
    end
  elseif not holder and claiming then
    redis.call("SET", lease, ARGV[1], "PX", ARGV[2])
    holder = ARGV[1]
  end
  out[#out + 1] = holder or ""
  -- Another runner holds the first queue: the others' leases are not read.
  if claiming and i == 1 and holder ~= ARGV[1] then break end
end
return out
