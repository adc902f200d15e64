import { authHeaders } from './api';
import { refuseKey } from './auth';
import type { MeshEvent } from './types';

/** What a followed stream tells its owner. */
export interface StreamHandlers {
  event(event: MeshEvent, type: string): void;
  /** The stream (re)connected: anything missed while it was down may need reading again. */
  connected(reconnect: boolean): void;
  /** True once the invocation followed reached its end: a stream that closes then is done. */
  over(): boolean;
  /** The stream ended for good: the invocation reached its terminal event. */
  ended(): void;
  /** The stream cannot be followed (404, or no key). */
  failed(status: number): void;
}

/**
 * Follows `url` (a text/event-stream) with fetch, so the API key travels as a header, never in the
 * URL (docs/guides/console.md); after a dropped connection it reconnects with `Last-Event-ID` and goes on
 * where it was. Returns a function that stops it.
 */
export function followEvents(url: string, on: StreamHandlers): () => void {
  const abort = new AbortController();
  let lastId: string | undefined;
  let delay = 500;
  let connects = 0;
  const run = async () => {
    while (!abort.signal.aborted) {
      let res: Response;
      try {
        res = await fetch(url, {
          headers: authHeaders({
            accept: 'text/event-stream',
            ...(lastId ? { 'last-event-id': lastId } : {}),
          }),
          signal: abort.signal,
          cache: 'no-store',
        });
      } catch {
        if (abort.signal.aborted) return;
        await sleep(delay, abort.signal);
        delay = Math.min(delay * 2, 10_000);
        continue;
      }
      if (res.status === 401) refuseKey();
      if (res.status === 401 || res.status === 404 || res.status === 400) {
        on.failed(res.status);
        return;
      }
      if (!res.ok || !res.body) {
        // 429 (too many streams) or 503: try again later
        await sleep(delay, abort.signal);
        delay = Math.min(delay * 2, 10_000);
        continue;
      }
      on.connected(connects++ > 0);
      await read(res.body, (id, type, data) => {
        delay = 500;
        if (id) lastId = id;
        try {
          on.event(JSON.parse(data) as MeshEvent, type);
        } catch {
          // a data line that is not one JSON event: skipped
        }
      });
      if (abort.signal.aborted) return;
      // A close before the end is a dropped connection (a proxy, a restart): resume after lastId.
      if (on.over()) {
        on.ended();
        return;
      }
      await sleep(delay, abort.signal);
      delay = Math.min(delay * 2, 10_000);
    }
  };
  void run();
  return () => abort.abort();
}

/** Reads Server-Sent Events from `body` until it ends or breaks. */
async function read(
  body: ReadableStream<Uint8Array>,
  emit: (id: string | undefined, type: string, data: string) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined;
  let type = 'message';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) emit(id, type, data.join('\n'));
          id = undefined;
          type = 'message';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') id = val;
          else if (field === 'event') type = val;
          else if (field === 'data') data.push(val);
        }
        nl = buffer.indexOf('\n');
      }
    }
  } catch {
    // the connection broke (or the page stopped following): the caller decides
  } finally {
    reader.releaseLock();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
