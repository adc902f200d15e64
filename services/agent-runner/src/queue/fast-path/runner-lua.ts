import path from 'node:path';
import { bullKeys } from '@agentmesh/shared';
import { meshLua } from '@agentmesh/shared/redis';

/** Starts the last argument of a take step that activates the job's invocation (take-activation.ts). */
export const TAKE_MARK = 'agentmesh:take:1:';

/** A guarded step's answer (the add's, the park's) when the parent's activation no longer holds the parent. */
export const GUARD_FENCED = -9001;

/**
 * The loader of the fast path's Lua (this folder's lua/, then the mesh's): what the mesh puts into
 * BullMQ's steps and its own steps beside them, with the constants its files declare.
 */
export const runnerLua = meshLua.extend(path.join(import.meta.dirname, 'lua'), {
  TAKE_MARK,
  GUARD_FENCED,
  LOCK_SUFFIX: bullKeys.lock(''),
});
