-- boundedTail(key, maxBytes): the newest whole exchanges (user + answer pairs) of the message list
-- `key` whose JSON fits in `maxBytes`, oldest first. It reads an element at a time from the
-- newest, so a list stored before the byte bound (108 MB once) is never read whole: reading it so
-- blocked Redis for everyone.
local function boundedTail(key, maxBytes)
  local n = redis.call('LLEN', key)
  local picked, total, i = {}, 0, 1
  while i + 1 <= n do
    local answer = redis.call('LINDEX', key, -i)
    local user = redis.call('LINDEX', key, -(i + 1))
    if total + #answer + #user > maxBytes then break end
    total = total + #answer + #user
    table.insert(picked, answer)
    table.insert(picked, user)
    i = i + 2
  end
  local out = {}
  for k = #picked, 1, -1 do table.insert(out, picked[k]) end
  return out
end
