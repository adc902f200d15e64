import { rootOf } from '../ids.js';
import type { KeyLayout } from '../keys.js';
import type { MeshRedis } from '../redis/connect-redis.js';
import type { CallRecord } from '../wire/call-record.js';
import type { MeshScripts } from './mesh-scripts.js';

/** Nodes per CANCEL_TREE step: two keys each, so one step's arguments stay small. */
const BATCH = 256;

/**
 * The ids of an invocation and of every invocation under it so far (children from call records),
 * in one pipelined round trip per level; only reads.
 */
export async function subtreeIds(redis: MeshRedis, keys: KeyLayout, id: string): Promise<Set<string>> {
  const ids = new Set([id]);
  for (let frontier = [id]; frontier.length > 0; ) {
    const p = redis.pipeline();
    for (const x of frontier) p.hvals(keys.calls(rootOf(x), x));
    frontier = [];
    for (const [err, records] of (await p.exec()) ?? []) {
      if (err) throw err;
      for (const text of records as string[]) {
        const child = childOf(text);
        if (!child || ids.has(child)) continue;
        ids.add(child);
        frontier.push(child);
      }
    }
  }
  return ids;
}

/** A node flagged by cancelTree, with the status it had. */
export interface FlaggedNode {
  id: string;
  status: string;
}

/**
 * Flags an invocation and its whole subtree (never its ancestors) as cancelled: walks the subtree,
 * flags what it found in CANCEL_TREE steps that name every key they touch, and flags any child
 * those steps report that the walk missed (created in between, before its parent was flagged;
 * one created after inherits the flag). `error` makes the target, when it is a root still running,
 * end `failed` with it (a tree that fails) instead of `cancelled`. Returns the nodes that were
 * not terminal, each once, the target first.
 */
export async function cancelTree(
  redis: MeshRedis,
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
  error?: string,
): Promise<FlaggedNode[]> {
  const seen = await subtreeIds(redis, keys, id);
  const flagged: FlaggedNode[] = [];
  let errorArg = error ?? '';
  for (let batch = [...seen]; batch.length > 0; ) {
    const next: string[] = [];
    for (let i = 0; i < batch.length; i += BATCH) {
      const ids = batch.slice(i, i + BATCH);
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
    batch = next;
  }
  return flagged;
}

/** The child id a call record names, if any (an unreadable record names none). */
function childOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as CallRecord).childId;
  } catch {
    return undefined;
  }
}
