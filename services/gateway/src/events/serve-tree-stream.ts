import type { FastifyReply } from 'fastify';
import { SLOW_CLIENT_MS, SseWriter, STREAM_HEADERS, sseFrame } from './sse-writer.js';
import type { TreeStream } from './tree-stream.js';

/** How a tree stream is served as Server-Sent Events. */
export interface ServeTreeStream {
  /** Bytes the gateway may buffer for this client (MESH_STREAM_BUFFER_BYTES). */
  bufferBytes: number;
  /** How often a heartbeat comment goes out. */
  heartbeatMs: number;
  /** With deltas: how long a structural event waits for a slow client before it is disconnected. */
  slowClientMs?: number | undefined;
  /** True when the stream carries deltas (they may be dropped for a slow client; see SseWriter). */
  deltas: boolean;
  /** The first bytes: `: connected` for GET …/events, the view's `status` event for invoke. */
  first: string;
  /** Called once when the response ends (frees the stream's slot). */
  release: () => void;
  /** Warns when reading failed. */
  warn: (message: string) => void;
}

/**
 * Answers `200 text/event-stream` with a tree stream's items (docs/reference/rest-api.md#events):
 * the first bytes, the items as SSE frames within the client's buffer bound, heartbeats while it
 * lasts; the response ends when the stream ends, the client goes away, or `endAll` runs.
 * Returns once it has ended.
 */
export async function serveTreeStream(
  reply: FastifyReply,
  stream: TreeStream,
  opts: ServeTreeStream,
  open: Set<() => void>,
): Promise<void> {
  const res = reply.raw;
  const writer = new SseWriter(
    res,
    opts.bufferBytes,
    opts.deltas ? (opts.slowClientMs ?? SLOW_CLIENT_MS) : undefined,
  );
  let ended = false;
  let heartbeat: NodeJS.Timeout | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    open.delete(end);
    clearInterval(heartbeat);
    stream.close();
    opts.release();
    res.end();
  };
  open.add(end);
  res.on('close', end);
  reply.hijack();
  res.writeHead(200, STREAM_HEADERS);
  res.write(opts.first);
  heartbeat = setInterval(() => writer.comment('heartbeat'), opts.heartbeatMs);
  try {
    for await (const item of stream) {
      if (item.delta) {
        writer.delta((gap) => sseFrame(item, gap));
        continue;
      }
      if (!(await writer.structural(sseFrame(item)))) break;
      // Held back, the stream read nothing meanwhile: deltas trimmed away then are a gap too.
      if (opts.deltas && writer.takeWaited() && (await stream.deltasLost())) writer.markGap();
    }
  } catch (e) {
    if (!ended) opts.warn((e as Error).message);
  }
  end();
}
