import { isInvocationId, type KeyLayout, type Logger, MeshError, rootOf } from '@agentmesh/shared';
import { duplicateRedis, type MeshRedis } from '@agentmesh/shared/redis';

/** A running call's view of its invocation's cancellation. */
export interface Watched {
  /** Aborts when the invocation is cancelled. */
  signal: AbortSignal;
  /** Stops watching (the call ended). */
  stop(): void;
}

/**
 * Aborts running tool calls whose invocation is cancelled (docs/architecture/durability-and-fencing.md): the cancellation is the
 * flag in Redis; a broadcast on the cancel channel (any id of the tree) only says when to look.
 * Every running call of that tree checks its own invocation's flag, so a broadcast for an
 * ancestor reaches a descendant's calls.
 */
export class CancelWatch {
  private readonly running = new Map<string, Set<AbortController>>();
  private subscriber: MeshRedis | undefined;

  constructor(
    private readonly redis: MeshRedis,
    private readonly keys: KeyLayout,
    private readonly log: Logger,
  ) {}

  /** Subscribes to the cancel channel on a connection of its own. */
  async start(): Promise<void> {
    if (this.subscriber) return;
    const subscriber = duplicateRedis(this.redis);
    this.subscriber = subscriber;
    subscriber.on('error', (e: Error) => this.log.warn({ err: e.message }, 'redis subscriber error'));
    subscriber.on('message', (_channel: string, id: string) => void this.onBroadcast(id));
    await subscriber.subscribe(this.keys.cancelChannel());
  }

  /** Closes the subscriber connection. */
  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    await subscriber?.quit().catch(() => subscriber.disconnect());
  }

  /**
   * Watches one call of `invocationId` until `stop()`. It is registered before the flag is read,
   * so a cancellation is seen either by that read or by the broadcast that follows it.
   */
  async watch(invocationId: string): Promise<Watched> {
    const controller = new AbortController();
    const set = this.running.get(invocationId) ?? new Set();
    set.add(controller);
    this.running.set(invocationId, set);
    const stop = () => {
      set.delete(controller);
      if (set.size === 0 && this.running.get(invocationId) === set) this.running.delete(invocationId);
    };
    const [cancelled] = await this.flagged([invocationId]);
    if (cancelled) controller.abort(cancelledError());
    return { signal: controller.signal, stop };
  }

  private async onBroadcast(id: string): Promise<void> {
    if (!isInvocationId(id)) return;
    const root = rootOf(id);
    const ids = [...this.running.keys()].filter((inv) => rootOf(inv) === root);
    if (ids.length === 0) return;
    const flags = await this.flagged(ids);
    for (const [i, inv] of ids.entries()) {
      if (!flags[i]) continue;
      for (const c of this.running.get(inv) ?? []) c.abort(cancelledError());
    }
  }

  /** Whether each invocation is flagged cancelled; an unreadable flag counts as not cancelled. */
  private async flagged(ids: string[]): Promise<boolean[]> {
    const known = ids.filter(isInvocationId);
    if (known.length === 0) return ids.map(() => false);
    try {
      // One read per invocation, sent together: the trees may sit on different cluster slots,
      // where a single pipeline would be refused.
      const replies = await Promise.all(
        known.map((id) =>
          this.redis.hmget(this.keys.invocation(rootOf(id), id), 'cancelRequested', 'status').catch(() => []),
        ),
      );
      const byId = new Map(
        known.map((id, i) => {
          const [requested, status] = replies[i] ?? [];
          return [id, requested === '1' || status === 'cancelled'];
        }),
      );
      return ids.map((id) => byId.get(id) ?? false);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'cannot read cancellation flags');
      return ids.map(() => false);
    }
  }
}

function cancelledError(): MeshError {
  return new MeshError('cancelled');
}
