import { DEFAULT_STREAM_BUFFER_BYTES, type KeyLayout } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { FastifyInstance } from 'fastify';
import type { EventHub } from './event-hub.js';
import type { ServeTreeStream } from './serve-tree-stream.js';
import { StreamSlots } from './stream-slots.js';
import { TreeStreams, type TreeStreamsDeps } from './tree-streams.js';
import { WatchKeeper } from './watch-keeper.js';

/** The gateway's settings for streams (GatewayOptions' fields of the same names). */
export interface TreeStreamingOptions {
  maxStreamsPerKey?: number;
  maxStreams?: number;
  heartbeatMs?: number;
  streamBufferBytes?: number;
  slowClientMs?: number;
  watchTtlMs?: number;
  watchRefreshMs?: number;
}

/** What every streaming route shares (docs/guides/streaming.md). */
export interface TreeStreaming {
  /** One count of open streams for every kind: event, invoke, A2A, chat and MCP progress (bounds.md). */
  slots: StreamSlots;
  /** Keeps each watched tree's watch flag set. */
  watches: WatchKeeper;
  streams: TreeStreams;
  /** How an SSE answer is written: its buffer bound, heartbeats, a slow client's patience. */
  serve: Pick<ServeTreeStream, 'bufferBytes' | 'heartbeatMs' | 'slowClientMs'>;
  /**
   * The end of every response still streaming a tree, by the function that ends it: event and
   * invoke streams, streamed chat completions, A2A requests and MCP calls.
   */
  open: Set<() => void>;
}

/**
 * Builds what the streaming routes share and ends it with the gateway: open streams in `preClose`
 * (fastify runs `onClose` only after its open connections end, so an open stream would hold the
 * gateway's closing until its invocation ended), the watch refreshes in `onClose`. Their
 * connections close as their answers end (setup/close-connections.ts), not on the clients' keep-alive.
 */
export function installTreeStreaming(
  app: FastifyInstance,
  deps: { redis: MeshRedis; keys: KeyLayout; hub: EventHub; reader: TreeStreamsDeps['reader'] },
  opts: TreeStreamingOptions,
): TreeStreaming {
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const watches = new WatchKeeper(deps.redis, deps.keys, opts.watchTtlMs, opts.watchRefreshMs);
  const streams = new TreeStreams({ ...deps, watches, idleMs: heartbeatMs });
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
    streams.closeAll();
  });
  app.addHook('onClose', async () => watches.close());
  return {
    slots: new StreamSlots(opts.maxStreamsPerKey ?? 32, opts.maxStreams ?? 1024),
    watches,
    streams,
    serve: {
      bufferBytes: opts.streamBufferBytes ?? DEFAULT_STREAM_BUFFER_BYTES,
      heartbeatMs,
      slowClientMs: opts.slowClientMs,
    },
    open,
  };
}
