import { type KeyLayout, type Logger, MeshError } from '@agentmesh/shared';
import { connectRedis, type MeshRedis, type RedisTarget } from '@agentmesh/shared/redis';

/**
 * Cancellation's fast path: the gateway flags the subtree in Redis (what every activation checks)
 * and broadcasts the ids; an activation in flight here aborts its model and tool calls.
 */
export class CancelListener {
  /** The abort controller of each activation in flight, by invocation id. */
  readonly inFlight = new Map<string, AbortController>();
  private readonly subscriber: MeshRedis;

  constructor(target: RedisTarget, log: Logger) {
    this.subscriber = connectRedis(target, { maxRetriesPerRequest: null });
    this.subscriber.on('error', (e: Error) => log.warn({ err: e.message }, 'redis subscriber error'));
    this.subscriber.on('message', (_channel: string, invocationId: string) => {
      this.inFlight.get(invocationId)?.abort(new MeshError('cancelled'));
    });
  }

  /** Subscribes to the mesh's cancel channel. */
  async start(keys: KeyLayout): Promise<void> {
    await this.subscriber.subscribe(keys.cancelChannel());
  }

  close(): void {
    this.subscriber.disconnect();
  }
}
