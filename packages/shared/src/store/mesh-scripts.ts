import type { LuaScript } from '../redis/lua-loader.js';
import {
  ACTIVATE,
  CANCEL_TREE,
  COMMIT_MEMORY,
  CREATE_FORK,
  CREATE_INVOCATION,
  DECIDE_APPROVAL,
  DISCARD_CALLS,
  FINISH,
  LIST_RECENT,
  PARK,
  READ_FORK_SOURCE,
  READ_INVOCATION,
  RECORD_CALL,
  REQUEST_APPROVAL,
  SUBMIT_CHILD,
} from './lua-steps.js';

/** The part of an ioredis client (or pipeline) the scripts need. */
export interface ScriptHost {
  defineCommand(name: string, definition: LuaScript): void;
}

type Caller = (...args: (string | number)[]) => Promise<unknown>;

/** Typed callers of the mesh's Lua steps on one connection. */
export interface MeshScripts {
  createInvocation: Caller;
  activate: Caller;
  recordCall: Caller;
  submitChild: Caller;
  park: Caller;
  finish: Caller;
  cancelTree: Caller;
  commitMemory: Caller;
  discardCalls: Caller;
  listRecent: Caller;
  readInvocation: Caller;
  requestApproval: Caller;
  decideApproval: Caller;
  readForkSource: Caller;
  createFork: Caller;
}

const SCRIPTS: Record<keyof MeshScripts, LuaScript> = {
  createInvocation: CREATE_INVOCATION,
  activate: ACTIVATE,
  recordCall: RECORD_CALL,
  submitChild: SUBMIT_CHILD,
  park: PARK,
  finish: FINISH,
  cancelTree: CANCEL_TREE,
  commitMemory: COMMIT_MEMORY,
  discardCalls: DISCARD_CALLS,
  listRecent: LIST_RECENT,
  readInvocation: READ_INVOCATION,
  requestApproval: REQUEST_APPROVAL,
  decideApproval: DECIDE_APPROVAL,
  readForkSource: READ_FORK_SOURCE,
  createFork: CREATE_FORK,
};

/** Registers every Lua step on a connection (EVALSHA with EVAL fallback) and returns callers. */
export function meshScripts(redis: ScriptHost): MeshScripts {
  const callers: Partial<MeshScripts> = {};
  for (const [name, script] of Object.entries(SCRIPTS) as [keyof MeshScripts, LuaScript][]) {
    const command = `mesh_${name}`;
    redis.defineCommand(command, script);
    const host = redis as unknown as Record<string, Caller>;
    callers[name] = (...args) => host[command]!.call(redis, ...args);
  }
  return callers as MeshScripts;
}
