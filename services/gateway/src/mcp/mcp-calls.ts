import { createHash } from 'node:crypto';
import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * The tools/call requests this gateway is answering, found by the request a cancellation names.
 * Stateless Streamable HTTP sends `notifications/cancelled` as a POST of its own, which any
 * gateway may receive: that gateway publishes the call's scope on a Redis channel, and the one
 * answering the call (every gateway listens) ends it. A scope is the API key (its owner hash),
 * the client's `Mcp-Session-Id` (a token the gateway hands out at `initialize` and keeps nowhere)
 * and the JSON-RPC id, so one client can cancel only its own calls.
 */
export class McpCalls {
  private readonly running = new Map<string, Set<() => void>>();

  constructor(
    private readonly redis: MeshRedis,
    private readonly channel: string,
  ) {}

  /** The scope of a request: owner, session token and JSON-RPC id, hashed (the parts are the client's). */
  static scope(owner: string | undefined, session: string | undefined, requestId: string | number): string {
    return createHash('sha256')
      .update(JSON.stringify([owner ?? null, session ?? null, requestId]))
      .digest('hex');
  }

  /** Starts listening for cancellations on `subscriber` (a connection in subscriber mode). */
  async listen(subscriber: MeshRedis): Promise<void> {
    subscriber.on('message', (channel: string, scope: string) => {
      if (channel !== this.channel) return;
      for (const cancel of this.running.get(scope) ?? []) cancel();
    });
    await subscriber.subscribe(this.channel);
  }

  /** Runs `onCancel` when a cancellation for `scope` arrives, until the returned function is called. */
  track(scope: string, onCancel: () => void): () => void {
    const set = this.running.get(scope) ?? new Set();
    this.running.set(scope, set);
    set.add(onCancel);
    return () => {
      set.delete(onCancel);
      if (set.size === 0 && this.running.get(scope) === set) this.running.delete(scope);
    };
  }

  /** Tells every gateway that the client cancelled the request of `scope`. */
  async cancel(scope: string): Promise<void> {
    await this.redis.publish(this.channel, scope);
  }
}
