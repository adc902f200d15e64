import http from 'node:http';

/** What the metrics server serves: a prom-client registry. */
export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

/**
 * Serves `GET /metrics` and `GET /healthz` (liveness, for a container healthcheck) at `host`:`port`
 * (port 0: the OS picks; host: `HOST`, loopback by default, `0.0.0.0` in a container so that a
 * scraper on another host reaches it); anything else is 404.
 */
export async function serveMetrics(
  registry: MetricsSource,
  port: number,
  host = '127.0.0.1',
): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    const path = req.url?.split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(path === '/metrics' || path === '/healthz' ? 405 : 404).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
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
