import path from 'node:path';
import { bullKeys } from '@agentmesh/shared';
import { fastPathLua } from '@agentmesh/shared/queue/fast-path';

/** A guarded step's answer (the add's, the park's) when the parent's activation no longer holds the parent. */
export const GUARD_FENCED = -9001;
/** Starts the arguments of a finish riding in a job's completion (finish-in-completion.ts). */
export const FINISH_MARK = 'agentmesh:finish:1';
/** After the finish's arguments: the parent the completion moves on is taken by this runner right behind. */
export const PARENT_TAKE_MARK = 'agentmesh:parenttake:1';
/** The finish did not write: the invocation had ended already. */
export const FINISH_ENDED = -9003;
/** The finish did not write: another activation holds the invocation. */
export const FINISH_FENCED = -9002;

/**
 * The loader of the runner's fast path Lua (this folder's lua/, then the shared fast path's and
 * the mesh's), with the constants its files declare.
 */
export const runnerLua = fastPathLua.extend(path.join(import.meta.dirname, 'lua'), {
  GUARD_FENCED,
  FINISH_MARK,
  PARENT_TAKE_MARK,
  FINISH_ENDED,
  FINISH_FENCED,
  WAIT_SUFFIX: bullKeys.queue(':', 'wait'),
  PRIORITIZED_SUFFIX: bullKeys.queue(':', 'prioritized'),
  LOCK_SUFFIX: bullKeys.lock(''),
});
