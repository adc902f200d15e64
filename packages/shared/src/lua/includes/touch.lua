-- touch(ttl): slides the TTL of every key of the session (KEYS[1..4]) to `ttl` seconds.
local function touch(ttl)
  for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
end
