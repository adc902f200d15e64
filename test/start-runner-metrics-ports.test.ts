// npm start gives each runner its own metrics port, the next free ones from RUNNER_METRICS_PORT.
import net from 'node:net';
import t from 'tap';
import { runnerMetricsPorts } from '../scripts/runner-metrics-ports.js';
import { freePort } from './support/redis-server.js';

const hold = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

t.test('0 is off for every runner', async (t) => {
  t.strictSame(await runnerMetricsPorts(0, 3, '127.0.0.1'), [0, 0, 0]);
});

t.test('the ports from the base up, a taken one skipped', async (t) => {
  // A free port whose next one is taken by this test.
  let base = 0;
  let held: net.Server | undefined;
  for (let i = 0; i < 20 && !held; i++) {
    base = await freePort();
    held = await hold(base + 1).catch(() => undefined);
  }
  t.ok(held, 'a port held');
  t.teardown(() => held?.close());
  const ports = await runnerMetricsPorts(base, 2, '127.0.0.1');
  t.equal(ports[0], base);
  t.ok(ports[1]! > base + 1, `the taken ${base + 1} is skipped: ${ports[1]}`);
});

t.test('too few free ports near the base is an error saying so', async (t) => {
  await t.rejects(
    runnerMetricsPorts(65530, 10, '127.0.0.1'),
    /RUNNER_METRICS_PORT=65530: 10 runner\(s\) need a metrics port each/,
  );
});
