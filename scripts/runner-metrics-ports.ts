import net from 'node:net';

/** How far past RUNNER_METRICS_PORT npm start looks for free ports. */
const SPAN = 100;

/**
 * A metrics port for each of `count` runners (docs/guides/getting-started.md): the first `count` ports from `base` up
 * that can be listened on at `host` right now, skipping taken ones. `base` 0 means off (every
 * runner gets 0). Throws when fewer than `count` are free within SPAN ports, or past 65535.
 */
export async function runnerMetricsPorts(base: number, count: number, host: string): Promise<number[]> {
  if (base === 0) return Array.from({ length: count }, () => 0);
  const ports: number[] = [];
  for (let port = base; ports.length < count && port < base + SPAN && port <= 65535; port++) {
    if (await canListen(port, host)) ports.push(port);
  }
  if (ports.length < count)
    throw new Error(
      `RUNNER_METRICS_PORT=${base}: ${count} runner(s) need a metrics port each, and only ${ports.length} of ports ${base}–${Math.min(base + SPAN - 1, 65535)} are free on ${host}`,
    );
  return ports;
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
