-- redisNowMs(): now in milliseconds by Redis's clock (TIME), for steps that compare times written
-- from several hosts, whose own clocks may disagree.
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
