-- CANCEL_TREE: flags a batch of one tree's invocations as cancelled (never their ancestors): each
-- one not terminal gets `cancelRequested`, which every runner checks before each call; children
-- created later by a flagged parent inherit the flag (submit-child). cancelTree (cancel-tree.ts)
-- calls it a level at a time, each level the children the step before reported: each key is in
-- KEYS, their count passed first.
-- KEYS: inv and calls of each node, in pairs.
-- ARGV: an error JSON or '' (when set and the first node is not terminal, it gets `treeError`: a
-- root whose tree fails, e.g. on `budget_exceeded`, then ends `failed` with it instead of
-- `cancelled`; finish reads it; the first error set wins), then the nodes' ids in KEYS' order.
-- Returns {flagged: [id, status, ...] of the nodes that were not terminal, children: every child
-- id their call records name in the same tree}.
--- @include "is-terminal"
local function live(status)
  return status and not isTerminal(status)
end
if ARGV[1] ~= '' and live(redis.call('HGET', KEYS[1], 'status')) then
  redis.call('HSETNX', KEYS[1], 'treeError', ARGV[1])
end
local flagged, children = {}, {}
for n = 1, #ARGV - 1 do
  local inv, calls = KEYS[2 * n - 1], KEYS[2 * n]
  local status = redis.call('HGET', inv, 'status')
  if live(status) then
    redis.call('HSET', inv, 'cancelRequested', '1')
    table.insert(flagged, ARGV[n + 1])
    table.insert(flagged, status)
  end
  -- A child of another tree is a fork's reused delegation (docs/guides/durability.md): not this tree's to cancel.
  local root = string.sub(ARGV[n + 1], 1, 36)
  for _, text in ipairs(redis.call('HVALS', calls)) do
    local child = string.match(text, '"childId":"([^"]+)"')
    if child and string.sub(child, 1, 36) == root then table.insert(children, child) end
  end
end
return {flagged, children}
