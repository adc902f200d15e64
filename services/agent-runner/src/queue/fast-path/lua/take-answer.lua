-- Replaces BullMQ's answer with the job taken (take-step.ts, TAKE_CHANGES): its delay field is
-- negative when no other job waits (-1, or minus the time the next delayed job in KEYS[7] is due),
-- and the activation of take-prelude.lua rides as a fifth field, which BullMQ does not read.
return {rcall("HGETALL", jobKey), jobId, 0, meshMore and 0 or -(getNextDelayedTimestamp(KEYS[7]) or 1),
    meshTakeActivation(jobKey)}
