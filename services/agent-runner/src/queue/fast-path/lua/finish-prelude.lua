-- Put ahead of BullMQ's step that completes a job (fetch-scripts.ts): when the step's arguments
-- hold FINISH_MARK, the finish step's keys and arguments follow it and finish runs before the job
-- is completed. When finish does not write, the step ends there, the job untouched, answering why
-- (FINISH_ENDED, FINISH_FENCED); the runner then completes the job with BullMQ's step alone, as
-- it would have after a finish of its own. BullMQ reads its arguments 1-9 only.
-- With PARENT_TAKE_MARK and the parent's job id after finish's arguments, a parent the completion
-- moves to its wait list (BullMQ's moveParentToWait, changed by finish-parent-marker.lua) gets no
-- marker when it is the only job waiting there: the runner takes it in the step right behind
-- (trailing-takes.ts), so no worker wakes for it.
-- ARGV after BullMQ's: FINISH_MARK, the count of finish's keys, the count of its arguments, the
-- keys, the arguments, then optionally PARENT_TAKE_MARK and the parent's job id.
--- @include "finish-function"
--- @include "is-terminal"
--- @const WAIT_SUFFIX
--- @const PRIORITIZED_SUFFIX
--- @const FINISH_MARK
--- @const PARENT_TAKE_MARK
--- @const FINISH_ENDED
--- @const FINISH_FENCED
local meshTakenParentId
-- queueKey is BullMQ's parentQueueKey, without the trailing ':' of toKey('').
local function meshParentTaken(queueKey, parentId)
  return meshTakenParentId == parentId and redis.call('LLEN', queueKey .. WAIT_SUFFIX) == 0
    and redis.call('ZCARD', queueKey .. PRIORITIZED_SUFFIX) == 0
end
local function meshFinishFirst()
  local at
  for i = 10, #ARGV do
    if ARGV[i] == FINISH_MARK then at = i; break end
  end
  if not at then return nil end
  local nKeys, nArgs = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local from = at + 3
  local keys, argv = {}, {}
  for j = 1, nKeys do keys[j] = ARGV[from + j - 1] end
  from = from + nKeys
  for j = 1, nArgs do argv[j] = ARGV[from + j - 1] end
  from = from + nArgs
  if ARGV[from] == PARENT_TAKE_MARK then meshTakenParentId = ARGV[from + 1] end
  if meshFinish(keys, argv) ~= 0 then return nil end
  local status = redis.call('HGET', keys[1], 'status')
  if isTerminal(status) then return FINISH_ENDED end
  return FINISH_FENCED
end
do
  local refused = meshFinishFirst()
  if refused then return refused end
end
