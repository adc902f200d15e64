-- Replaces BullMQ's move of a completed job's parent to its wait list in moveToFinished
-- (fetch-scripts.ts, FINISHING_CHANGES): no marker for a parent the completing runner takes itself
-- (finish-prelude.lua, meshParentTaken).
addJobInTargetList(parentWaitKey, parentMarkerKey, "RPUSH",
                isParentPausedOrMaxed or meshParentTaken(parentQueueKey, parentId), parentId)
