-- Replaces BullMQ's unconditional re-add of the queue's marker in a take (take-step.ts,
-- TAKE_CHANGES): the marker is put back only when another job waits. KEYS[1] and KEYS[3] are the
-- queue's wait list and prioritized set in every step that takes a job.
local meshMore = rcall("LLEN", KEYS[1]) > 0 or rcall("ZCARD", KEYS[3]) > 0
  if meshMore then addBaseMarkerIfNeeded(markerKey, false) end
