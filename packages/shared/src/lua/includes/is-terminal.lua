-- isTerminal(status): whether an invocation's status is terminal (TERMINAL_STATUSES, the
-- TypeScript side's list): nil, an invocation that does not exist, is not.
--- @const TERMINAL_STATUSES
local terminalStatus = {}
for _, s in ipairs(TERMINAL_STATUSES) do terminalStatus[s] = true end
local function isTerminal(status)
  return terminalStatus[status] == true
end
