import { type KeyLayout, MeshError } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { MeshState } from '../mesh-state.js';
import { errorResponse } from './responses.js';

/** `GET /healthz` (liveness), `/readyz` (Redis, catalogue, a live runner per agent), `/metrics`. */
export const healthRoutes: FastifyPluginAsync<{
  redis: MeshRedis;
  keys: KeyLayout;
  mesh: MeshState;
  registry: Registry;
}> = async (app, { redis, keys, mesh, registry }) => {
  // Open even with MESH_API_KEYS set: `security: []` says so in the OpenAPI document (docs.ts).
  // The header lets npm start tell its own gateway from another one answering on the same port.
  const liveness = {
    tags: ['health'],
    operationId: 'getHealth',
    summary: 'Liveness: the gateway process answers',
    response: { 200: statusBody('ok', 'The gateway is alive.') },
  };
  app.get('/healthz', { schema: liveness }, async (_req, reply) => {
    reply.header('x-agentmesh-pid', String(process.pid));
    return { status: 'ok' };
  });

  const readiness = {
    tags: ['health'],
    operationId: 'getReadiness',
    summary: 'Readiness: Redis reachable, the tool catalogue published, and a live runner for every agent',
    response: {
      200: statusBody('ready', 'The mesh can run every agent.'),
      503: errorResponse('`unavailable`: not ready; `details[].message` names each missing part.'),
    },
  };
  app.get('/readyz', { schema: readiness }, async (_req, reply) => {
    const problems: string[] = [];
    const agents = Object.keys(mesh.config.agents);
    try {
      // One read per agent, sent together: each runner set has its own hash tag (cluster slot).
      const now = Date.now();
      const counts = await withTimeout(
        Promise.all(agents.map((a) => redis.zcount(keys.agentRunners(a), now, '+inf'))),
        1000,
      );
      counts.forEach((n, i) => {
        if (!n) problems.push(`no live runner hosts agent ${agents[i]}`);
      });
    } catch {
      problems.push('Redis is unreachable');
    }
    if (!mesh.plan) problems.push('the tool catalogue has not been published yet');
    if (problems.length === 0) return { status: 'ready' };
    const e = new MeshError(
      'unavailable',
      `Not ready: ${problems.join('; ')}.`,
      problems.map((m) => ({ path: '/', message: m })),
    );
    return reply.status(503).send(e.toBody());
  });

  const metrics = {
    tags: ['health'],
    operationId: 'getMetrics',
    summary: 'Prometheus metrics of the gateway',
    response: {
      200: {
        description: 'Prometheus text format 0.0.4.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
  };
  app.get('/metrics', { schema: metrics }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
};

/** `{"status": <value>}`, the body of a health answer. */
function statusBody(value: string, description: string) {
  return {
    'x-response-description': description,
    type: 'object',
    properties: { status: { type: 'string', enum: [value] } },
    required: ['status'],
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms))]);
}
