import path from 'node:path';
import { EVENT_STREAM_MAXLEN } from '../defaults.js';
import { LuaLoader } from '../redis/lua-loader.js';
import { TERMINAL_STATUSES } from '../wire/invocation-view.js';
import { DONE_MESSAGE_MAX_BYTES } from './done-channel.js';

/**
 * The loader of the mesh's Lua (packages/shared/src/lua: its steps, and their fragments in
 * `includes/`), with the constants a file may declare (`--- @const NAME`). The queue fast path
 * extends it with its own folders. Each step's KEYS, ARGV and reply are in its file's header.
 */
export const meshLua = new LuaLoader([path.join(import.meta.dirname, '..', 'lua')], {
  EVENT_STREAM_MAXLEN,
  DONE_MESSAGE_MAX_BYTES,
  TERMINAL_STATUSES,
});

// The steps that change invocation state. Each runs atomically on one tree's slot; every runner
// write is fenced by the activation epoch (docs/architecture/durability-and-fencing.md).

/** Starts an activation (activate.lua). */
export const ACTIVATE = meshLua.script('activate', 4);
/** Writes a call record, its usage and memory writes (record-call.lua). */
export const RECORD_CALL = meshLua.script('record-call', 6);
/** Records a delegation and creates its child (submit-child.lua). */
export const SUBMIT_CHILD = meshLua.script('submit-child', 4);
/** Marks an activation `waiting` before it parks (park.lua). */
export const PARK = meshLua.script('park', 2);
/** Asks for a call's approval (request-approval.lua). */
export const REQUEST_APPROVAL = meshLua.script('request-approval', 3);
/** Commits a code agent's memory writes (commit-memory.lua). */
export const COMMIT_MEMORY = meshLua.script('commit-memory', 2);
/** Discards call records of a code agent (discard-calls.lua). */
export const DISCARD_CALLS = meshLua.script('discard-calls', 2);
/** Ends an invocation, its parent's record with it (finish.lua). */
export const FINISH = meshLua.script('finish', 8);
/** Flags a level of a tree cancelled (cancel-tree.lua): its caller passes the count of keys. */
export const CANCEL_TREE = meshLua.script('cancel-tree');

// The gateway's steps: creating a root invocation, listing it, deciding approvals, reading a view.

/**
 * Creates a root invocation unless it exists, and on one server lists it as recent
 * (create-invocation.lua): its caller passes the count of keys.
 */
export const CREATE_INVOCATION = meshLua.script('create-invocation');
/** Lists a root as recent, the set bounded (list-recent.lua). */
export const LIST_RECENT = meshLua.script('list-recent', 1);
/** Decides a pending approval (decide-approval.lua). */
export const DECIDE_APPROVAL = meshLua.script('decide-approval', 2);
/** Reads the invocation a fork starts from, within bounds (read-fork-source.lua). */
export const READ_FORK_SOURCE = meshLua.script('read-fork-source', 3);
/** Creates a fork unless it exists (create-fork.lua). */
export const CREATE_FORK = meshLua.script('create-fork', 4);
/** Reads an invocation's state, records and texts (read-invocation.lua). */
export const READ_INVOCATION = meshLua.script('read-invocation', 3);

// The steps of sessions (docs/guides/sessions.md), each on the four keys of one session.

/** Binds a new invocation to a session (session-claim.lua). */
export const SESSION_CLAIM = meshLua.script('session-claim', 4);
/** Advances a session past its current invocation (session-advance.lua). */
export const SESSION_ADVANCE = meshLua.script('session-advance', 4);
/** Deletes a session (session-delete.lua). */
export const SESSION_DELETE = meshLua.script('session-delete', 4);
/** The history a session's next invocation sees (session-history.lua). */
export const SESSION_HISTORY = meshLua.script('session-history', 1);
/** One page of a session's messages (session-page.lua). */
export const SESSION_PAGE = meshLua.script('session-page', 2);
