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
}

/** What a script answers: tool calls, a final text, or an HTTP error. */
export type FakeReply =
  | { calls: { name: string; args?: unknown; rawArgs?: string }[]; content?: string }
  | { final: string }
  | { status: number; retryAfter?: string; body?: unknown }
  /** A body sent verbatim (malformed JSON, odd shapes), with status 200 unless told. */
  | { raw: string; rawStatus?: number };

/** Decides a reply from the request; `latencyMs` delays the answer. */
export type FakeScript = (req: SeenRequest) => FakeReply & { latencyMs?: number };

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
      const payload = JSON.parse(body) as { messages: SeenMessage[]; tools?: SeenRequest['tools'] };
      const system = payload.messages.find((m) => m.role === 'system')?.content ?? '';
      const seen: SeenRequest = {
        n: requests.length + 1,
        agent: /@agent (\S+)/.exec(system)?.[1] ?? '?',
        messages: payload.messages,
        tools: payload.tools ?? [],
        arrivedAt: Date.now(),
        authorization: req.headers.authorization,
        traceparent: req.headers.traceparent as string | undefined,
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
      send(res, 200, {
        id: `chatcmpl-${seen.n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: 'fake',
        choices: [{ index: 0, message, finish_reason: 'calls' in reply ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
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
