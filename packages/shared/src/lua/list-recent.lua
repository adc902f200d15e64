-- LIST_RECENT: lists a root invocation as recent and keeps the set bounded, in one step on its one
-- key (includes/recent-listing.lua). On one Redis server the create lists a root itself
-- (create-invocation.lua); this step is the listing of a fork, and of every root on a cluster.
-- KEYS: recent.
-- ARGV: now, id, oldest score kept, rank limit, ttlSeconds.
-- Returns 1.
--- @include "recent-listing"
listRecent(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
