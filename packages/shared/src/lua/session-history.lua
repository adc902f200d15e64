-- SESSION_HISTORY: the history a session's next invocation sees: the newest whole exchanges within
-- ARGV[1] bytes, oldest first (never the whole list: see includes/bounded-tail.lua).
-- KEYS: messages.
-- ARGV: maxBytes.
--- @include "bounded-tail"
return boundedTail(KEYS[1], tonumber(ARGV[1]))
