import http from 'node:http';
import { waitUntil } from './wait-until.js';

/** One Server-Sent Event: its `id:`, `event:` and `data:` parsed as JSON. */
export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

/** An SSE response read as it arrives (node:http, so pausing it holds the socket back for real). */
export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body of an answer other than 200. */
  body: any;
  /** The events received so far (complete ones only). */
  events: SseEvent[];
  /** Everything received so far, as text. */
  text(): string;
  /** Resolves when the response ended, was cut, or was closed. */
  ended: Promise<void>;
  /** True once the response ended cleanly (the server finished it). */
  complete(): boolean;
  /** Waits until `check(events)` holds (fails after `ms`). */
  until(check: (events: SseEvent[]) => boolean, what: string, ms?: number): Promise<void>;
  /** Stops reading (the server's socket fills up) / reads again. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens `url` (GET, or POST with a JSON body) and reads it as an event stream. */
export function openSse(
  url: string,
  opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown } = {},
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(url, {
      method: opts.method ?? (payload === undefined ? 'GET' : 'POST'),
      headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      let pending = '';
      let complete = false;
      const events: SseEvent[] = [];
      res.setEncoding('utf8');
      const ended = new Promise<void>((done) => {
        res.on('end', () => {
          complete = true;
          done();
        });
        res.on('close', () => done());
        res.on('error', () => done());
      });
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: undefined,
        events,
        text: () => text,
        ended,
        complete: () => complete,
        until: async (check, what, ms = 30_000) => {
          await waitUntil(
            async () => check(events),
            ms,
            () => `${what}; got ${JSON.stringify(events.map((e) => e.event))}`,
          );
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      };
      if (stream.status !== 200) {
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        void ended.then(() => {
          stream.body = text ? JSON.parse(text) : undefined;
          resolve(stream);
        });
        return;
      }
      res.on('data', (chunk: string) => {
        text += chunk;
        pending += chunk;
        for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event = parseBlock(block);
          if (event) events.push(event);
        }
      });
      resolve(stream);
    });
    req.end(payload);
  });
}

/** Parses a whole SSE text (its complete events). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .map(parseBlock)
    .filter((e): e is SseEvent => e !== undefined);
}

function parseBlock(block: string): SseEvent | undefined {
  const field = (name: string) =>
    block
      .split('\n')
      .find((l) => l.startsWith(`${name}: `))
      ?.slice(name.length + 2);
  const data = field('data');
  if (data === undefined) return undefined;
  return { id: field('id') ?? '', event: field('event') ?? '', data: JSON.parse(data) };
}
