import http from 'node:http';

/** What the metrics server serves: a prom-client registry. */
export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

/** Serves `GET /metrics` on loopback at `port` (0: the OS picks); anything else is 404. */
export async function serveMetrics(registry: MetricsSource, port: number): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return server;
}
