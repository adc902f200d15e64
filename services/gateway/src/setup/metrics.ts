import { EVENT_LOOP_SAMPLE_MS } from '@agentmesh/shared';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { queueJobsGauge } from './queue-jobs-gauge.js';

/** The route label of a request no route matched (404, 405): never the raw URL, which is unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The gateway's Prometheus registry (served by `GET /metrics`): process metrics, the depth of
 * every agent's queue (one reading of Redis serving scrapes for `queueCounts.cacheMs`, a scrape
 * waiting at most `queueCounts.timeoutMs` for it; default 1 s, 2 s), and
 * `mesh_gateway_request_seconds` by route template, method and status, recorded by an
 * `onResponse` hook. Install before any route.
 */
export function installMetrics(
  app: FastifyInstance,
  queues: ReadonlyMap<string, Queue>,
  queueCounts: { cacheMs?: number | undefined; timeoutMs?: number | undefined } = {},
): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  queueJobsGauge(registry, queues, queueCounts.cacheMs, queueCounts.timeoutMs);
  const requestSeconds = new Histogram({
    name: 'mesh_gateway_request_seconds',
    help: 'Gateway HTTP requests by route template (`unmatched` when no route matched), method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    // The not-found handler (404, 405) has no route template: fastify leaves `url` undefined there.
    const route = req.is404 ? UNMATCHED_ROUTE : (req.routeOptions.url ?? UNMATCHED_ROUTE);
    // Node's parser admits only the methods it knows, so the method label is bounded as it is.
    requestSeconds.observe(
      { route, method: req.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  return registry;
}
