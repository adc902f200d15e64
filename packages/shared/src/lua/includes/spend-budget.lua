-- spendBudget(inv, root, prompt, completion): adds a model call's tokens to the tree's budget
-- counter (`budgetUsed` on the root's hash) when the tree has a budget
-- (docs/guides/approvals-and-budgets.md): in the very step that records the call, so exactly once.
local function spendBudget(inv, root, prompt, completion)
  local used = tonumber(prompt) + tonumber(completion)
  if used > 0 and redis.call('HEXISTS', inv, 'budget') == 1 then redis.call('HINCRBY', root, 'budgetUsed', used) end
end
