import { EVENT_LOOP_SAMPLE_MS, isErrorCode } from '@agentmesh/shared';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { LoadedTool } from './load-tools.js';

/** The label of a name the tool-host does not serve: a caller can invent names without end (docs/reference/bounds.md). */
export const UNKNOWN_LABEL = 'unknown';
/** The route whose requests are tool calls. */
const INVOKE_ROUTE = '/tools/:name/invoke';

/**
 * The tool-host's Prometheus metrics on its own open `GET /metrics`: process metrics, and every
 * `POST /tools/{name}/invoke` counted and timed by tool and outcome (`succeeded`, or the error
 * code the caller received: `tool_failed`, `tool_timeout`, `tool_not_found` …). A name the
 * tool-host does not serve is `unknown`, an outcome outside the error registry too. Install
 * before the tool routes.
 */
export function installToolMetrics(app: FastifyInstance, tools: readonly LoadedTool[]): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const calls = new Counter({
    name: 'mesh_tool_host_calls_total',
    help: 'Tool calls served by the tool-host, by tool and outcome.',
    labelNames: ['tool', 'outcome'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'mesh_tool_host_call_seconds',
    help: 'Tool call duration on the tool-host (waits on a busy Idempotency-Key included), by tool and outcome.',
    labelNames: ['tool', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const known = new Set(tools.map((t) => t.info.name));
  // The outcome is read from the error body the caller gets, so it names exactly what they saw.
  const outcomes = new WeakMap<FastifyRequest, string>();
  app.addHook('onSend', async (req, reply, payload) => {
    if (!isToolCall(req) || reply.statusCode < 400) return payload;
    outcomes.set(req, errorCodeOf(payload));
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    if (!isToolCall(req)) return;
    const name = (req.params as { name?: unknown }).name;
    const labels = {
      tool: typeof name === 'string' && known.has(name) ? name : UNKNOWN_LABEL,
      outcome: reply.statusCode < 400 ? 'succeeded' : (outcomes.get(req) ?? UNKNOWN_LABEL),
    };
    calls.inc(labels);
    seconds.observe(labels, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}

function isToolCall(req: FastifyRequest): boolean {
  return req.method === 'POST' && req.routeOptions.url === INVOKE_ROUTE;
}

/** `error.code` of an error body `{"error": {"code": …}}` when it is a registered code, else `unknown`. */
function errorCodeOf(payload: unknown): string {
  if (typeof payload !== 'string') return UNKNOWN_LABEL;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } })?.error?.code;
    return isErrorCode(code) ? code : UNKNOWN_LABEL;
  } catch {
    return UNKNOWN_LABEL;
  }
}
