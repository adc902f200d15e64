import type { KeyLayout } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/** Trees remembered at once before the stale ones are dropped. */
const PRUNE_AT = 1024;

interface Entry {
  watched?: boolean;
  /** Epoch ms until which `watched` holds. */
  until: number;
  pending?: Promise<boolean> | undefined;
}

/**
 * Whether anyone watches a tree's deltas (its `watch` key exists, docs/reference/redis-layout.md),
 * asked of Redis at most once per `maxAgeMs` per tree: a runner publishes no delta of a tree
 * nobody watches, and the check itself is a read (EXISTS), never a write.
 */
export class WatchCheck {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly redis: MeshRedis,
    private readonly keys: KeyLayout,
    private readonly maxAgeMs = 1000,
  ) {}

  /** The answer known without asking (fresh), or undefined. */
  known(rootId: string): boolean | undefined {
    const e = this.entries.get(rootId);
    return e?.watched !== undefined && e.until > Date.now() ? e.watched : undefined;
  }

  /**
   * What a step that read the watch key anyway found (ACTIVATE): the answer for the next `maxAgeMs`,
   * as if asked now. A check in flight is left to settle.
   */
  seed(rootId: string, watched: boolean): void {
    const e = this.entries.get(rootId);
    if (e?.pending) return;
    this.prune();
    this.entries.set(rootId, this.settleEntry(e ?? { until: 0 }, watched));
  }

  /** Whether the tree is watched, at most `maxAgeMs` old; a failed check reads as unwatched. */
  watched(rootId: string): Promise<boolean> {
    const e = this.entries.get(rootId);
    if (e?.pending) return e.pending;
    const known = this.known(rootId);
    if (known !== undefined) return Promise.resolve(known);
    this.prune();
    const entry: Entry = e ?? { until: 0 };
    entry.pending = this.redis.exists(this.keys.watch(rootId)).then(
      (n) => this.settle(entry, n === 1),
      () => this.settle(entry, false),
    );
    this.entries.set(rootId, entry);
    return entry.pending;
  }

  private settle(entry: Entry, watched: boolean): boolean {
    this.settleEntry(entry, watched);
    return watched;
  }

  private settleEntry(entry: Entry, watched: boolean): Entry {
    entry.watched = watched;
    entry.until = Date.now() + this.maxAgeMs;
    entry.pending = undefined;
    return entry;
  }

  private prune(): void {
    if (this.entries.size < PRUNE_AT) return;
    const now = Date.now();
    for (const [rootId, e] of this.entries) if (!e.pending && e.until <= now) this.entries.delete(rootId);
  }
}
