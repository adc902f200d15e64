import path from 'node:path';
import { bullKeys } from '@agentmesh/shared';
import { fastPathLua } from '@agentmesh/shared/queue/fast-path';

/** A guarded step's answer (the add's, the park's) when the parent's activation no longer holds the parent. */
export const GUARD_FENCED = -9001;

/**
 * The loader of the runner's fast path Lua (this folder's lua/, then the shared fast path's and
 * the mesh's), with the constants its files declare.
 */
export const runnerLua = fastPathLua.extend(path.join(import.meta.dirname, 'lua'), {
  GUARD_FENCED,
  LOCK_SUFFIX: bullKeys.lock(''),
});
