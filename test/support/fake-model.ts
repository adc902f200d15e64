import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat message as the fake model receives it. */
export interface SeenMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** One request the fake model received, with when it arrived and when it was answered. */
export interface SeenRequest {
  n: number;
  /** The agent it came from: the first system message's first line, `@agent <name>`, or '?'. */
  agent: string;
  messages: SeenMessage[];
  tools: { type: string; function: { name: string; description: string; parameters: unknown } }[];
  arrivedAt: number;
  doneAt?: number;
  aborted?: boolean;
  authorization: string | undefined;
  /** The W3C trace context the request carried. */
  traceparent: string | undefined;
  /** The request asked for a streamed reply (`stream: true`). */
  stream: boolean;
  /** The request's body as sent, for keys the fields above do not show (`stream_options`). */
  body: Record<string, unknown>;
  /** The client's port: which connection it came on. */
  remotePort: number | undefined;
}

/** What a script answers: tool calls, a final text, or an HTTP error. */
export type FakeReply =
  | { calls: { name: string; args?: unknown; rawArgs?: string }[]; content?: string }
  | { final: string }
  | { status: number; retryAfter?: string; body?: unknown }
  /** A body sent verbatim (malformed JSON, odd shapes), with status 200 unless told. */
  | { raw: string; rawStatus?: number }
  /**
   * A streamed body written verbatim, piece by piece (`chunkDelayMs` apart): hostile streams. With
   * `stall`, the connection stays open after the last piece, sending nothing.
   */
  | { sse: string[]; stall?: boolean };

/** How a calls or final reply is streamed when the request asks for it (`stream: true`). */
export interface StreamControls {
  /** The pieces the content (and each call's arguments) is cut into; default 3. */
  chunks?: number;
  /** Milliseconds between two pieces written; default 0 (the whole body in one write). */
  chunkDelayMs?: number;
  /** Answer one JSON completion even when asked to stream, as a provider that cannot. */
  plain?: boolean;
}

/**
 * Decides a reply from the request; `latencyMs` delays the answer, and so does `until`: the answer
 * waits for it to settle too (a test's own moment, as every call having arrived).
 */
export type FakeScript = (
  req: SeenRequest,
) => FakeReply & { latencyMs?: number; until?: Promise<unknown> } & StreamControls;

/** One `chat.completion.chunk` event of a streamed reply, framed (`data: …` and a blank line). */
export const sseEvent = (chunk: unknown): string =>
  `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`;

/** A scripted OpenAI-compatible Chat Completions server that records every request. */
export interface FakeModel {
  url: string;
  requests: SeenRequest[];
  /** Requests by agent, in arrival order. */
  of(agent: string): SeenRequest[];
  setScript(script: FakeScript): void;
  close(): Promise<void>;
}

/** The turn of a request: how many assistant messages it already carries. */
export const turnOf = (r: SeenRequest) => r.messages.filter((m) => m.role === 'assistant').length;

/** Tool messages of a request, by tool_call_id. */
export const toolMessagesOf = (r: SeenRequest) =>
  r.messages.filter((m) => m.role === 'tool').map((m) => ({ id: m.tool_call_id, content: m.content }));

/** Starts the fake model on a free loopback port. Agents name themselves with `@agent <name>` in their instructions. */
export async function startFakeModel(script: FakeScript = () => ({ final: 'ok' })): Promise<FakeModel> {
  const requests: SeenRequest[] = [];
  let current = script;
  // Pending latencies are dropped on close, so a test's process need not wait them out.
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
        return send(res, 404, { error: { message: 'not found' } });
      const payload = JSON.parse(body) as {
        messages: SeenMessage[];
        tools?: SeenRequest['tools'];
        stream?: boolean;
        stream_options?: { include_usage?: boolean };
      };
      const system = payload.messages.find((m) => m.role === 'system')?.content ?? '';
      const seen: SeenRequest = {
        n: requests.length + 1,
        agent: /@agent (\S+)/.exec(system)?.[1] ?? '?',
        messages: payload.messages,
        tools: payload.tools ?? [],
        arrivedAt: Date.now(),
        authorization: req.headers.authorization,
        traceparent: req.headers.traceparent as string | undefined,
        stream: payload.stream === true,
        body: payload as unknown as Record<string, unknown>,
        remotePort: req.socket.remotePort,
      };
      requests.push(seen);
      res.on('close', () => {
        if (!res.writableFinished) seen.aborted = true;
      });
      const reply = current(seen);
      if (reply.latencyMs) {
        await new Promise<void>((r) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            r();
          }, reply.latencyMs);
          timers.add(timer);
        });
      }
      if (reply.until) await reply.until.catch(() => undefined);
      seen.doneAt = Date.now();
      if (seen.aborted) return;
      if ('raw' in reply) {
        res.writeHead(reply.rawStatus ?? 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(reply.raw),
        });
        return res.end(reply.raw);
      }
      if ('status' in reply) {
        const headers: Record<string, string> = reply.retryAfter ? { 'retry-after': reply.retryAfter } : {};
        return send(
          res,
          reply.status,
          reply.body ?? { error: { message: `scripted ${reply.status}` } },
          headers,
        );
      }
      if ('sse' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        await writePieces(res, reply.sse, reply.chunkDelayMs ?? 0, timers);
        if (!reply.stall) res.end();
        return;
      }
      const message =
        'calls' in reply
          ? {
              role: 'assistant',
              content: reply.content ?? null,
              tool_calls: reply.calls.map((c, i) => ({
                id: `call_${seen.n}_${i}`,
                type: 'function',
                function: { name: c.name, arguments: c.rawArgs ?? JSON.stringify(c.args ?? {}) },
              })),
            }
          : { role: 'assistant', content: reply.final };
      const finish = 'calls' in reply ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
      if (seen.stream && !reply.plain) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const events: (Record<string, unknown> | string)[] = streamedEvents(
          seen.n,
          message,
          finish,
          reply.chunks ?? 3,
        );
        if (payload.stream_options?.include_usage) events.push(chunkOf(seen.n, [], usage));
        events.push('[DONE]');
        await writePieces(res, events.map(sseEvent), reply.chunkDelayMs ?? 0, timers);
        seen.doneAt = Date.now();
        res.end();
        return;
      }
      send(res, 200, {
        id: `chatcmpl-${seen.n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: 'fake',
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    of: (agent) => requests.filter((r) => r.agent === agent),
    setScript: (s) => (current = s),
    close: () =>
      new Promise((r) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function send(res: http.ServerResponse, status: number, obj: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(obj);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Writes the pieces `delayMs` apart (all in one write without a delay); stops when the client has gone. */
async function writePieces(
  res: http.ServerResponse,
  pieces: string[],
  delayMs: number,
  timers: Set<NodeJS.Timeout>,
): Promise<void> {
  if (delayMs <= 0) {
    res.write(pieces.join(''));
    return;
  }
  for (const piece of pieces) {
    if (res.destroyed) return;
    res.write(piece);
    await new Promise<void>((r) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        r();
      }, delayMs);
      timers.add(timer);
    });
  }
}

/** A `chat.completion.chunk` with these choices (and usage). */
function chunkOf(n: number, choices: unknown[], usage?: unknown): Record<string, unknown> {
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: 'fake',
    choices,
    ...(usage ? { usage } : {}),
  };
}

/** `text` cut into `parts` pieces of about equal length (none empty unless the text is). */
export function cutInto(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [text];
}

/** The chunks OpenAI streams for a message: the role, the content's pieces, each call's pieces, the finish. */
function streamedEvents(
  n: number,
  message: {
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  },
  finish: string,
  parts: number,
): Record<string, unknown>[] {
  const delta = (d: Record<string, unknown>, finishReason: string | null = null) =>
    chunkOf(n, [{ index: 0, delta: d, finish_reason: finishReason }]);
  const events = [delta({ role: 'assistant', content: message.content === null ? null : '' })];
  if (message.content)
    for (const piece of cutInto(message.content, parts)) events.push(delta({ content: piece }));
  (message.tool_calls ?? []).forEach((c, index) => {
    events.push(
      delta({
        tool_calls: [
          { index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of cutInto(c.function.arguments, parts)) {
      if (piece !== '') events.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  events.push(delta({}, finish));
  return events;
}
