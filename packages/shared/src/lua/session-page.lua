-- SESSION_PAGE: one page of a session's messages, oldest first (GET /sessions/{id}).
-- KEYS: meta, messages.
-- ARGV: from (the position of its first message: positions count every message the session ever
-- kept, those dropped from the head included), limit, maxBytes (a page stops before the message
-- that would pass it, but holds at least one).
-- Returns {dropped, length, first, ...messagesJson}: the position of the head, the list's length,
-- and the position of the page's first message (the head when `from` has been dropped since).
local dropped = tonumber(redis.call('HGET', KEYS[1], 'dropped') or '0')
local len = redis.call('LLEN', KEYS[2])
local first = math.max(tonumber(ARGV[1]), dropped)
local index, total, page = first - dropped, 0, {}
while index < len and #page < tonumber(ARGV[2]) do
  local m = redis.call('LINDEX', KEYS[2], index)
  if #page > 0 and total + #m > tonumber(ARGV[3]) then break end
  total = total + #m
  table.insert(page, m)
  index = index + 1
end
local result = {dropped, len, first}
for _, m in ipairs(page) do table.insert(result, m) end
return result
