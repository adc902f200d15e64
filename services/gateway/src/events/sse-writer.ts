import type { ServerResponse } from 'node:http';
import type { TreeStreamItem } from './tree-stream.js';

/**
 * The head of every event stream the gateway answers itself (tree events, invoke streams, chat
 * completions). No `Connection` header: one set by hand would keep the connection of a client that
 * asked `Connection: close` open after the stream ends; Node decides from the request.
 */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

/** How long a structural event waits for a slow client's buffer to drain before it is disconnected. */
export const SLOW_CLIENT_MS = 30_000;

/**
 * Writes one client's Server-Sent Events within a bound on what the gateway buffers for it
 * (MESH_STREAM_BUFFER_BYTES, docs/reference/bounds.md), on the socket's own backpressure
 * (`writableLength`, `drain`) rather than a queue of its own:
 * - a delta that would take the buffer past the bound is dropped, and the next delta written says
 *   so (`gap: true` in its data);
 * - a structural event is never dropped: past the bound it waits for the buffer to drain; a client
 *   that does not drain within `slowClientMs` is disconnected (it resumes with Last-Event-ID).
 *   Without `slowClientMs` it waits as long as the client stays (the stream without deltas).
 * Frames are the caller's, so a protocol with its own framing (OpenAI chunks, A2A) reuses it.
 */
export class SseWriter {
  private gap = false;
  /** True once a structural event waited for the buffer to drain since the last `takeWaited()`. */
  private waited = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBytes: number,
    private readonly slowClientMs?: number,
  ) {}

  /** True when nothing more can be written (the client went away, or was disconnected). */
  get gone(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** A comment line (`: text`), e.g. a heartbeat: a few bytes, written whatever the buffer holds. */
  comment(text: string): void {
    if (!this.gone) this.res.write(`: ${text}\n\n`);
  }

  /** Writes a delta's frame (`frame(gap)`) unless the buffer would pass the bound; true when written. */
  delta(frame: (gap: boolean) => string): boolean {
    if (this.gone) return false;
    const text = frame(this.gap);
    if (pastBound(this.res, Buffer.byteLength(text), this.maxBytes)) {
      this.gap = true;
      return false;
    }
    this.res.write(text);
    this.gap = false;
    return true;
  }

  /** The next delta written says `gap: true` (deltas were lost on the way, not only here). */
  markGap(): void {
    this.gap = true;
  }

  /** Writes a structural frame, first waiting while the buffer is past the bound; false when the client is gone. */
  async structural(text: string): Promise<boolean> {
    if (this.gone) return false;
    const res = this.res;
    if (res.writableNeedDrain && res.writableLength + Buffer.byteLength(text) > this.maxBytes) {
      this.waited = true;
      if (!(await this.drained())) {
        res.destroy();
        return false;
      }
    }
    if (this.gone) return false;
    res.write(text);
    return true;
  }

  /** True when a structural event waited since the last call (its caller then asks whether deltas were lost). */
  takeWaited(): boolean {
    const waited = this.waited;
    this.waited = false;
    return waited;
  }

  /** Resolves true on `drain`, false when the client goes away or `slowClientMs` passes first. */
  private drained(): Promise<boolean> {
    const res = this.res;
    return new Promise((resolve) => {
      const timer =
        this.slowClientMs === undefined ? undefined : setTimeout(() => done(false), this.slowClientMs);
      const onDrain = () => done(true);
      const onClose = () => done(false);
      function done(ok: boolean) {
        clearTimeout(timer);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      }
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  }
}

/**
 * True when `bytes` more would take what the gateway holds unsent for `res`'s client past `maxBytes`
 * (MESH_STREAM_BUFFER_BYTES): a delta, or an MCP call's progress, is dropped then.
 */
export function pastBound(res: ServerResponse, bytes: number, maxBytes: number): boolean {
  return res.writableLength + bytes > maxBytes;
}

/** The SSE frame of a tree stream's item; a delta after dropped ones carries `gap: true` in its data. */
export function sseFrame(item: TreeStreamItem, gap = false): string {
  const event = gap ? { ...item.event, data: { ...(item.event.data as object), gap: true } } : item.event;
  return `id: ${item.id}\nevent: ${item.event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
