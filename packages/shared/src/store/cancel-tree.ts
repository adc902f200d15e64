import { rootOf } from '../ids.js';
import type { KeyLayout } from '../keys.js';
import type { MeshScripts } from './mesh-scripts.js';

/** Nodes per CANCEL_TREE step: two keys each, so one step's arguments stay small. */
const BATCH = 256;

/** A node flagged by cancelTree, with the status it had. */
export interface FlaggedNode {
  id: string;
  status: string;
}

/**
 * Flags an invocation and its whole subtree (never its ancestors) as cancelled, a level at a time:
 * each CANCEL_TREE step flags the nodes it is given (naming every key it touches) and reports their
 * children, the next level. A flagged node's later children inherit the flag, so none escapes.
 * `error` makes the target, when it is a root still running, end `failed` with it (a tree that
 * fails) instead of `cancelled`. Returns the nodes that were not terminal, each once, the target first.
 */
export async function cancelTree(
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
  error?: string,
): Promise<FlaggedNode[]> {
  const seen = new Set([id]);
  const flagged: FlaggedNode[] = [];
  let errorArg = error ?? '';
  for (let level = [id]; level.length > 0; ) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += BATCH) {
      const ids = level.slice(i, i + BATCH);
      const nodeKeys = ids.flatMap((x) => [keys.invocation(rootOf(x), x), keys.calls(rootOf(x), x)]);
      const [flat, children] = (await scripts.cancelTree(nodeKeys.length, ...nodeKeys, errorArg, ...ids)) as [
        string[],
        string[],
      ];
      errorArg = '';
      for (let j = 0; j < flat.length; j += 2) flagged.push({ id: flat[j]!, status: flat[j + 1]! });
      for (const child of children) {
        if (seen.has(child)) continue;
        seen.add(child);
        next.push(child);
      }
    }
    level = next;
  }
  return flagged;
}
