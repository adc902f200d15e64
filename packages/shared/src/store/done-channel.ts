// What the done channel carries (finish.lua publishes a root's end there; the gateway's waiters
// read it).

/**
 * The largest view (state and call records, in bytes) the done message carries; a larger one is
 * read by the waiter (READ_INVOCATION). Every gateway receives every root's message.
 */
export const DONE_MESSAGE_MAX_BYTES = 32 * 1024;

/**
 * On the done channel, `approval <rootId>`: a node of that tree has parked waiting on a human
 * decision, so a request waiting on the root with `?wait` answers now (docs/reference/rest-api.md).
 */
export const APPROVAL_WAKE_PREFIX = 'approval ';
