import { type KeyLayout, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { MeshState } from '../mesh-state.js';

/** `GET /healthz` (liveness), `/readyz` (Redis, catalogue, a live runner per agent), `/metrics`. */
export const healthRoutes: FastifyPluginAsync<{
  redis: Redis;
  keys: KeyLayout;
  mesh: MeshState;
  registry: Registry;
}> = async (app, { redis, keys, mesh, registry }) => {
  // Open even with MESH_API_KEYS set: `security: []` says so in the OpenAPI document.
  app.get('/healthz', { schema: { tags: ['health'], security: [] } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['health'], security: [] } }, async (_req, reply) => {
    const problems: string[] = [];
    const agents = Object.keys(mesh.config.agents);
    try {
      const p = redis.pipeline();
      for (const a of agents) p.zcount(keys.agentRunners(a), Date.now(), '+inf');
      const counts = await withTimeout(p.exec(), 1000);
      // A pipeline answers per-command errors instead of rejecting when Redis is gone.
      const failed = counts?.find(([err]) => err)?.[0];
      if (!counts || failed) throw failed ?? new Error('no answer');
      counts.forEach(([, n], i) => {
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

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
};

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms))]);
}
