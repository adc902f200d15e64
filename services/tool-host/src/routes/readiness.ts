import { MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { McpConnection } from '../mcp/mcp-connection.js';

/**
 * `GET /readyz`: 200 `{status: 'ready'}` while every mounted MCP server is up; else 503
 * `unavailable` naming each server that is down (`details[].path` is where the config mounts it)
 * and whether it is being restarted (stdio) or reconnected (HTTP). Open like `/healthz`.
 */
export const readinessRoutes: FastifyPluginAsync<{ mcpServers: readonly McpConnection[] }> = async (
  app,
  { mcpServers },
) => {
  app.get('/readyz', async (_req, reply) => {
    const down = mcpServers.flatMap((s) => {
      const outage = s.outageReport();
      return outage ? [{ outage, title: s.title }] : [];
    });
    if (down.length === 0) return { status: 'ready' };
    const problems = down.map(({ outage, title }) => ({
      path: outage.path,
      message: `${title} is down since ${outage.since} (${outage.state})`,
    }));
    const e = new MeshError(
      'unavailable',
      `Not ready: ${problems.map((p) => p.message).join('; ')}.`,
      problems,
    );
    return reply.status(503).send(e.toBody());
  });
};
