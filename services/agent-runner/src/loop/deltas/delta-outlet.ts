import {
  DELTA_STREAM_MAXLEN,
  type EventSource,
  encodeEvent,
  type KeyLayout,
  type Logger,
} from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { CallDeltas } from './call-deltas.js';
import { WatchCheck } from './watch-check.js';

/** How a runner publishes deltas (`MESH_DELTA_FLUSH_MS`, `MESH_DELTA_RETENTION_SECONDS`). */
export interface DeltaSettings {
  flushMs: number;
  retentionSeconds: number;
}

/**
 * Where a runner's model calls publish their deltas (docs/guides/streaming.md): each tree's
 * `deltas` stream (docs/reference/redis-layout.md), only while its `watch` key says someone
 * watches. One per runner; each model call gets its own CallDeltas.
 */
export class DeltaOutlet {
  readonly watch: WatchCheck;

  constructor(
    private readonly redis: MeshRedis,
    private readonly keys: KeyLayout,
    readonly settings: DeltaSettings,
    private readonly log: Logger,
  ) {
    this.watch = new WatchCheck(redis, keys);
  }

  /** The listener of one model call; `reset` when the call is a re-issue (after a crash). */
  forCall(who: EventSource & { rootId: string }, callId: string, reset: boolean): CallDeltas {
    return new CallDeltas(this, who, callId, reset);
  }

  /**
   * Appends one delta event to its tree's stream, trimmed to DELTA_STREAM_MAXLEN; with `expire`,
   * the stream's TTL starts over. Never throws: a lost delta costs a watcher text the model_call
   * event carries anyway.
   */
  async publish(who: EventSource & { rootId: string }, data: unknown, expire: boolean): Promise<void> {
    const key = this.keys.deltas(who.rootId);
    // Sent back to back on the one connection (no pipeline object: ioredis copies every step
    // defined on a connection into each pipeline it makes).
    const writes: Promise<unknown>[] = [
      this.redis.xadd(key, 'MAXLEN', DELTA_STREAM_MAXLEN, '*', 'e', encodeEvent(who, 'delta', data)),
    ];
    if (expire) writes.push(this.redis.pexpire(key, this.settings.retentionSeconds * 1000));
    try {
      await Promise.all(writes);
    } catch (e) {
      this.log.debug({ rootId: who.rootId, err: (e as Error).message }, 'a delta was not published');
    }
  }
}
