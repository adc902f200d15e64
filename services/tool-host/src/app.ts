import { timingSafeEqual } from 'node:crypto';
import {
  type ArrivalTimeouts,
  arrivalCheckMs,
  clientErrorHandler,
  DEFAULT_ARRIVAL,
  frameworkErrorCode,
  type Logger,
  MeshError,
  setArrivalTimeouts,
  statusOf,
  WaitingConnections,
} from '@agentmesh/shared';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { CancelWatch } from './cancel/cancel-watch.js';
import type { OutcomeStore } from './idempotency/outcome-store.js';
import type { LoadedTool } from './load-tools.js';
import type { McpConnection } from './mcp/mcp-connection.js';
import { installToolMetrics } from './metrics.js';
import { readinessRoutes } from './routes/readiness.js';
import { toolRoutes } from './routes/tools.js';
import { callerTrace } from './tracing.js';

/** What the tool-host app is built from. */
export interface ToolHostOptions {
  tools: LoadedTool[];
  /** When set, every call must carry `Authorization: Bearer <token>`. */
  internalToken?: string | undefined;
  /** Keeps each Idempotency-Key's outcome; without it a repeated call runs again. */
  outcomes?: OutcomeStore | undefined;
  /**
   * Aborts the calls of cancelled invocations; by default one on the outcome store's Redis
   * (its own subscriber connection, opened when the app is ready and closed with it).
   */
  cancels?: CancelWatch | undefined;
  /** The mounted MCP servers, whose outages `/readyz` reports. */
  mcpServers?: readonly McpConnection[] | undefined;
  /** A pino logger; silent when absent. */
  logger?: FastifyBaseLogger;
  /** Bytes of a result answered and kept (MESH_MAX_RESULT_BYTES); past it, cut as the invocation cuts it. */
  maxResultBytes?: number | undefined;
  /** How long a request's headers, and the whole of it, may take to arrive (10 s, 30 s, as the gateway's). */
  arrival?: ArrivalTimeouts;
}

/** The tool-host's HTTP app: list, validate and call tools. `listen` is main's job. */
export function buildToolHost(opts: ToolHostOptions): FastifyInstance {
  const trace = callerTrace();
  // fastify's default is no request timeout: a body that stalled would hold its connection for ever.
  const arrival = opts.arrival ?? DEFAULT_ARRIVAL;
  const app = Fastify({
    loggerInstance: opts.logger ?? pino({ enabled: false }),
    logController: trace.logController, // fastify's request lines inside the caller's trace
    requestTimeout: arrival.requestTimeoutMs,
    http: { connectionsCheckingInterval: arrivalCheckMs(arrival) },
    clientErrorHandler, // a late request answers 408 request_timeout in the error contract's shape
    bodyLimit: 8 * 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, useDefaults: false, removeAdditional: false } },
  });
  trace.install(app); // first, so every other hook runs inside the caller's trace
  setArrivalTimeouts(app.server, arrival);
  // A connection with no request would hold the close until its client let go (WaitingConnections);
  // the calls under way finish first, each within its own timeout.
  const connections = new WaitingConnections(app.server);
  app.addHook('preClose', async () => connections.dropSilent());
  const expected = opts.internalToken ? Buffer.from(`Bearer ${opts.internalToken}`) : undefined;
  app.addHook('onRequest', async (req) => {
    // Health and metrics stay open, as on the gateway: probes and scrapers carry no token.
    if (!expected || req.url === '/healthz' || req.url === '/readyz' || req.url === '/metrics') return;
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new MeshError('unauthorized', 'A valid internal token is required.');
    }
  });
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof MeshError) return reply.status(err.status).send(err.toBody());
    const e = err as {
      statusCode?: number;
      code?: string;
      message: string;
      validation?: { instancePath: string; message?: string; params: Record<string, unknown> }[];
    };
    const code = frameworkErrorCode(e);
    if (code === 'unsupported_media_type' || code === 'payload_too_large') {
      return reply.status(statusOf(code)).send(new MeshError(code).toBody());
    }
    // A well-formed body that is not a ToolInvokeRequest (no context, …): the caller's input is wrong.
    if (e.validation) {
      const details = e.validation.map((v) => {
        const missing = v.params.missingProperty;
        return {
          path: `${v.instancePath}${typeof missing === 'string' ? `/${missing}` : ''}`,
          message: v.message ?? 'is invalid',
        };
      });
      return reply
        .status(400)
        .send(new MeshError('invalid_input', `Invalid request: ${e.message}`, details).toBody());
    }
    // The runner shows the parser's own words: they say what is wrong with the body.
    if (e.statusCode === 400)
      return reply.status(400).send(new MeshError('invalid_json', e.message).toBody());
    if (code) return reply.status(statusOf(code)).send(new MeshError(code).toBody());
    return reply.status(500).send(new MeshError('internal').toBody());
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .status(404)
      .send(new MeshError('not_found', `Route ${req.method} ${req.url.split('?')[0]} not found.`).toBody()),
  );
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.register(readinessRoutes, { mcpServers: opts.mcpServers ?? [] });
  const cancels =
    opts.cancels ??
    (opts.outcomes && new CancelWatch(opts.outcomes.redis, opts.outcomes.keys, app.log as Logger));
  if (cancels) {
    app.addHook('onReady', () => cancels.start());
    app.addHook('onClose', () => cancels.close());
  }
  installToolMetrics(app, opts.tools);
  app.register(toolRoutes, {
    tools: opts.tools,
    outcomes: opts.outcomes,
    cancels,
    maxResultBytes: opts.maxResultBytes,
  });
  return app;
}
