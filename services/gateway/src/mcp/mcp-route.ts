import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type KeyLayout, MeshError } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { FastifyPluginAsync } from 'fastify';
import { pastBound } from '../events/sse-writer.js';
import type { TreeStreaming } from '../events/tree-streaming.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { McpCalls } from './mcp-calls.js';
import { MCP_SCHEMA } from './mcp-schema.js';

/** Options of the MCP route. */
export interface McpRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  /** The shared command connection (cancellations are published on it). */
  redis: MeshRedis;
  /** A connection in subscriber mode (the gateway's), to hear cancellations from every gateway. */
  subscriber: MeshRedis;
  keys: KeyLayout;
  /** How long a tools/call waits for the agent (MESH_MCP_WAIT_SECONDS, default 300). */
  waitSeconds: number;
  defaultTimeoutSeconds: number;
  /**
   * A tools/call with a progress token follows the root's text through these streams, takes a
   * stream slot, and sends within the stream buffer bound (`serve.bufferBytes`), as every stream.
   */
  streaming: Pick<TreeStreaming, 'streams' | 'watches' | 'slots' | 'serve' | 'open'>;
}

/**
 * Refuses a JSON-RPC batch that repeats a request id: the SDK's transport would run every call and
 * answer one of them (issue 24); the first repeat is named with its index.
 */
function refuseRepeatedIds(body: unknown): void {
  if (!Array.isArray(body)) return;
  const seen = new Set<string>();
  for (const [i, message] of body.entries()) {
    const { method, id } = (message ?? {}) as { method?: unknown; id?: unknown };
    if (method === undefined || id === undefined || id === null) continue; // a response or a notification
    const key = JSON.stringify(id);
    if (seen.has(key)) {
      throw new MeshError('invalid_input', `The batch repeats the request id ${key.slice(0, 100)}.`, [
        { path: `/${i}/id`, message: 'repeats the id of an earlier request of the batch' },
      ]);
    }
    seen.add(key);
  }
}

/**
 * The MCP SDK, loaded with the first POST /mcp: its schemas cost every process that imports it
 * about 0.2 s of CPU at start, which a gateway no MCP client calls never needs to pay.
 */
let sdk:
  | Promise<
      [typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('./mcp-server.js')]
    >
  | undefined;
const loadSdk = () =>
  (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('./mcp-server.js'),
  ]));

/**
 * Leaves the connection's fate to Node on an answer the SDK writes: its streams name
 * `Connection: keep-alive`, and a Connection header set by hand keeps open a connection whose
 * client asked to close it (STREAM_HEADERS in events/sse-writer.ts says more). The SDK's Node
 * transport hands its headers to `writeHead` as one object.
 */
function dropConnectionHeader(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const headers = args.at(-1);
    if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
      const kept = Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'connection');
      args[args.length - 1] = Object.fromEntries(kept);
    }
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
}

const isInitialize = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';

/**
 * `POST /mcp`: the agents as an MCP server over stateless Streamable HTTP (docs/guides/mcp.md), with the
 * SDK's own transport, one server and transport per request. Auth (a bearer key and its scope) is
 * the gateway's, as for REST. GET and DELETE answer 405: there is no standalone stream and no
 * session to end. An `initialize` answer carries an `Mcp-Session-Id`, a random token the gateway
 * keeps nowhere: clients echo it, so a cancellation finds the client's own call (McpCalls).
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, opts) => {
  const calls = new McpCalls(opts.redis, opts.keys.mcpCancelChannel());
  await calls.listen(opts.subscriber);
  const deps = {
    mesh: opts.mesh,
    invocations: opts.invocations,
    calls,
    waitSeconds: opts.waitSeconds,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    streams: opts.streaming.streams,
    watches: opts.streaming.watches,
    slots: opts.streaming.slots,
    open: opts.streaming.open,
  };
  const bufferBytes = opts.streaming.serve.bufferBytes;

  app.post(
    '/mcp',
    {
      schema: MCP_SCHEMA,
      preValidation: async (req) => {
        if (req.body === undefined)
          throw new MeshError('invalid_json', 'The request body is empty: send a JSON-RPC message.');
        refuseRepeatedIds(req.body);
      },
    },
    async (req, reply) => {
      const sent = req.headers['mcp-session-id'];
      const session =
        typeof sent === 'string'
          ? sent
          : isInitialize(req.body)
            ? randomBytes(16).toString('hex')
            : undefined;
      const traceparent = typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined;
      const [{ StreamableHTTPServerTransport }, { mcpServer }] = await loadSdk();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const res = reply.raw;
      const server = mcpServer(deps, {
        caller: req.meshCaller,
        session,
        traceparent,
        abandon: () => void transport.close(),
        // The transport writes to the answer only while it needs no drain, and holds what comes
        // meanwhile in a queue of its own: no progress goes out then, nor past the bound.
        progressFits: (bytes) => !res.writableNeedDrain && !pastBound(res, bytes, bufferBytes),
      });
      reply.hijack();
      dropConnectionHeader(res);
      if (session !== undefined && sent === undefined) reply.raw.setHeader('mcp-session-id', session);
      // Finished or dropped, the answer's end closes both; a call still waiting then stops waiting
      // (a disconnection is no cancellation: the invocation goes on, as after a REST invoke).
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } catch (e) {
        req.log.error({ err: (e as Error).message }, 'mcp request failed');
        if (!reply.raw.headersSent) {
          const body = JSON.stringify(new MeshError('internal').toBody());
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(body);
        }
      }
    },
  );
};
