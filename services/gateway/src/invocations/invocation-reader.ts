import {
  type CallRecord,
  type InvocationView,
  isInvocationId,
  type KeyLayout,
  rootOf,
  toInvocationView,
} from '@agentmesh/shared';
import type { MeshRedis, MeshScripts } from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';
import { readInvocationSafely } from './read-invocation-safely.js';

/**
 * Reads invocations back from Redis, with the visibility rule of API keys: what the routes (and
 * the events stream) use to answer an invocation to a request's `meshCaller`.
 */
export class InvocationReader {
  constructor(
    protected readonly redis: MeshRedis,
    protected readonly scripts: MeshScripts,
    protected readonly keys: KeyLayout,
  ) {}

  /** The InvocationView of any invocation of any tree, or undefined. */
  async view(id: string): Promise<InvocationView | undefined> {
    const found = await readInvocationSafely(this.scripts, this.keys, id);
    return found && toInvocationView(found.state, found.calls);
  }

  /**
   * The InvocationView of `id` when `caller` may see it; undefined for a malformed id, an unknown
   * one, or another API key's (so a route answers 404 either way and leaks no existence).
   */
  async viewFor(id: string, caller: Caller): Promise<InvocationView | undefined> {
    if (!isInvocationId(id)) return undefined;
    const found = await readInvocationSafely(this.scripts, this.keys, id);
    if (!found || !caller.sees(found.state.owner)) return undefined;
    return toInvocationView(found.state, found.calls);
  }

  /** True when `id` exists and `caller` may see it: one small read, for routes that need no view. */
  async visibleTo(id: string, caller: Caller): Promise<boolean> {
    if (!isInvocationId(id)) return false;
    const [v, owner] = await this.redis.hmget(this.keys.invocation(rootOf(id), id), 'v', 'owner');
    return v !== null && caller.sees(owner ?? undefined);
  }

  /**
   * The ids of an invocation and of every invocation under it so far (children from call records).
   * cancelTree (shared) walks the same way, flagging each level as it reads it; this walk only
   * reads, in one pipelined round trip per level.
   */
  async subtreeIds(id: string): Promise<Set<string>> {
    const ids = new Set([id]);
    for (let frontier = [id]; frontier.length > 0; ) {
      const p = this.redis.pipeline();
      for (const x of frontier) p.hvals(this.keys.calls(rootOf(x), x));
      frontier = [];
      for (const [err, records] of (await p.exec()) ?? []) {
        if (err) throw err;
        for (const text of records as string[]) {
          const child = childOf(text);
          // Another tree's child is a fork's reused delegation (docs/guides/durability.md): not part of this one.
          if (!child || ids.has(child) || rootOf(child) !== rootOf(id)) continue;
          ids.add(child);
          frontier.push(child);
        }
      }
    }
    return ids;
  }
}

/** The child id a call record names, if any (an unreadable record names none). */
function childOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as CallRecord).childId;
  } catch {
    return undefined;
  }
}
