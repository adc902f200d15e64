import type { KeyLayout } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/** How long a watch flag lives without a refresh, and how often an open delta stream refreshes it. */
export const WATCH_TTL_MS = 30_000;
export const WATCH_REFRESH_MS = 10_000;

/** One watched tree: how many delta streams of this gateway hold it, its one refresh timer, its first SET. */
interface Held {
  holders: number;
  timer: NodeJS.Timeout;
  set: Promise<void>;
}

/**
 * Keeps a tree's watch flag (`keys.watch(root)`, docs/reference/redis-layout.md) set while any delta
 * stream of that tree is open on this gateway: SET with a TTL when one opens, refreshed by one timer
 * per tree (not per client); after the last one closes the flag simply expires. Runners publish
 * deltas only while the flag exists (docs/guides/streaming.md).
 */
export class WatchKeeper {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly redis: MeshRedis,
    private readonly keys: KeyLayout,
    private readonly ttlMs = WATCH_TTL_MS,
    private readonly refreshMs = WATCH_REFRESH_MS,
  ) {}

  /** The number of trees this gateway watches now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Sets the tree's flag (resolved once Redis has it) and keeps it set until the returned release.
   * The SET is sent before this first waits; a tree this gateway holds already is not set again
   * (a stream of an invocation watched since before its launch, invoke-stream.ts).
   */
  async hold(rootId: string): Promise<() => void> {
    let tree = this.held.get(rootId);
    if (!tree) {
      const timer = setInterval(() => void this.set(rootId).catch(() => undefined), this.refreshMs);
      timer.unref();
      tree = { holders: 0, timer, set: this.set(rootId) };
      this.held.set(rootId, tree);
    }
    const entry = tree;
    entry.holders++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--entry.holders > 0) return;
      clearInterval(entry.timer);
      if (this.held.get(rootId) === entry) this.held.delete(rootId);
    };
    try {
      await entry.set;
    } catch (e) {
      release();
      throw e;
    }
    return release;
  }

  /** Stops every refresh (the gateway closes; the flags expire on their own). */
  close(): void {
    for (const tree of this.held.values()) clearInterval(tree.timer);
    this.held.clear();
  }

  private async set(rootId: string): Promise<void> {
    await this.redis.set(this.keys.watch(rootId), '1', 'PX', this.ttlMs);
  }
}
