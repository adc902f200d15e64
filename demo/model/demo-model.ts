import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DemoReply, decideReply } from './decide-reply.js';
import { InvalidRequestError, parseChatRequest } from './parse-chat-request.js';
import { streamCompletion } from './stream-completion.js';

/** A running demo model: its OpenAI base URL (ending in `/v1`) and how to stop it. */
export interface DemoModel {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The model id the demo model lists; any requested model name is accepted and echoed. */
export const DEMO_MODEL_ID = 'offline-demo-model';
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Starts the offline demo model: a scripted OpenAI-compatible Chat Completions server
 * (`POST /v1/chat/completions`, `GET /v1/models`) that plans, searches and answers by rule, not by
 * language modelling. Its final answers say so. Asked to stream, it streams (word by word,
 * `chunkDelayMs` apart), as OpenAI does.
 */
export function startDemoModel({ port = 0, host = '127.0.0.1', chunkDelayMs = 0 } = {}): Promise<DemoModel> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/v1/models' && req.method === 'GET') {
        return send(res, 200, {
          object: 'list',
          data: [{ id: DEMO_MODEL_ID, object: 'model', created: 0, owned_by: 'agentmesh-demo' }],
        });
      }
      if (path !== '/v1/chat/completions') {
        return sendError(res, 404, `Unknown request URL: ${req.method} ${path}.`, 'unknown_url');
      }
      if (req.method !== 'POST') return sendError(res, 405, `Use POST for ${path}.`, 'method_not_allowed');
      if (size > MAX_BODY_BYTES)
        return sendError(res, 413, 'The request body is too large.', 'payload_too_large');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_json');
      }
      try {
        const request = parseChatRequest(body);
        const answer = completion(request.model, decideReply(request), JSON.stringify(body).length);
        if (!request.stream) return send(res, 200, answer);
        void streamCompletion(res, answer, { includeUsage: request.includeUsage, chunkDelayMs });
      } catch (e) {
        if (e instanceof InvalidRequestError)
          return sendError(res, 400, e.message, 'invalid_request', e.param);
        sendError(res, 500, `The offline demo model failed: ${(e as Error).message}`, 'internal_error');
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${address.port}/v1`,
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

// A Chat Completions response; token counts are estimated at four characters a token.
function completion(model: string, reply: DemoReply, promptChars: number) {
  const message =
    reply.type === 'final'
      ? { role: 'assistant', content: reply.content, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: reply.calls.map((c) => ({
            id: `call_${randomBytes(12).toString('hex')}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) },
          })),
        };
  const promptTokens = Math.ceil(promptChars / 4);
  const completionTokens = Math.max(1, Math.ceil(JSON.stringify(message).length / 4));
  return {
    id: `chatcmpl-demo-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: DEMO_MODEL_ID,
    choices: [
      { index: 0, message, logprobs: null, finish_reason: reply.type === 'final' ? 'stop' : 'tool_calls' },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  code: string,
  param: string | null = null,
) {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  send(res, status, { error: { message, type, param, code } });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
