import http from 'node:http';
import { MeshError } from '@agentmesh/shared';

/** What the metrics server serves: a prom-client registry. */
export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

/** Why the runner is not ready, one sentence each; empty when it is (runnerReadiness). */
export type Readiness = () => Promise<string[]>;

const PATHS = new Set(['/metrics', '/healthz', '/readyz']);

/**
 * Serves `GET /metrics`, `GET /healthz` (liveness) and `GET /readyz` (readiness, for a container
 * healthcheck: 200 `{status: 'ready'}`, else 503 `unavailable` naming each missing part, the body
 * the gateway's and tool-host's `/readyz` give) at `host`:`port` (port 0: the OS picks; host:
 * `HOST`, loopback by default, `0.0.0.0` in a container so that a scraper on another host reaches
 * it); anything else is 404.
 */
export async function serveMetrics(
  registry: MetricsSource,
  readiness: Readiness,
  port: number,
  host = '127.0.0.1',
): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    const path = req.url?.split('?')[0] ?? '';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(PATHS.has(path) ? 405 : 404).end();
      return;
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const problems = await readiness().catch((e: Error) => [e.message]);
      if (problems.length === 0) return sendJson(res, 200, { status: 'ready' });
      const e = new MeshError(
        'unavailable',
        `Not ready: ${problems.join('; ')}.`,
        problems.map((message) => ({ path: '/', message })),
      );
      return sendJson(res, 503, e.toBody());
    }
    if (path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    } catch {
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * Closes the server with its connections: the runner closes it last, once drained, so a scrape
 * under way may be cut; a connection with no request, or half of one, would otherwise hold the
 * runner's exit until its client let go (Node stops timing headers once its server closes).
 */
export function closeMetricsServer(server: http.Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}
