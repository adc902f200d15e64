-- READ_INVOCATION: reads an invocation's state and call records in one step, with the tree texts
-- they refer to (store/tree-texts.ts).
-- KEYS: inv, calls, the tree's texts.
-- Returns {stateFlat, callsFlat, textsFlat}.
--- @include "texts-of"
local state, calls = redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])
return {state, calls, textsOf(KEYS[3], state, calls)}
