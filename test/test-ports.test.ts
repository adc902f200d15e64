// The ports test-support hands out for services a test starts (test/support/redis-server.ts
// freePort): below the kernel's ephemeral range, so that no outgoing connection takes one in the
// moment between the pick and the service's listen (a tool-host once failed with EADDRINUSE so).
import fs from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { freePort, QUIET_PORTS } from './support/redis-server.js';

const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

/** A server listening on `port` on loopback, or undefined when the port is taken. */
function tryListen(port: number): Promise<net.Server | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
const close = (server: net.Server) => new Promise((r) => server.close(r));

t.test('each port is free, handed out once, and below the ephemeral range', async (t) => {
  const [first, last] = QUIET_PORTS!;
  t.ok(last < low && first < last, `the picks' range [${first}, ${last}] lies below ${low}`);
  const ports: number[] = [];
  for (let i = 0; i < 40; i++) ports.push(await freePort());
  t.equal(new Set(ports).size, ports.length, 'no port handed out twice');
  t.ok(
    ports.every((p) => p >= first && p <= last),
    `all within it: ${ports.join(', ')}`,
  );
  for (const port of ports.slice(0, 5)) {
    const server = await tryListen(port);
    t.ok(server, `${port} listened on`);
    if (server) await close(server);
  }
});

t.test('a port something listens on is never handed out', async (t) => {
  // Hold a tenth of the range the picks come from: none of those ports may come back.
  const [first, last] = QUIET_PORTS!;
  const held: net.Server[] = [];
  for (let port = first; port < first + (last - first + 1) / 10; port++) {
    const server = await tryListen(port);
    if (server) held.push(server);
  }
  t.teardown(() => Promise.all(held.map(close)));
  const busy = new Set(held.map((s) => (s.address() as net.AddressInfo).port));
  const ports: number[] = [];
  for (let i = 0; i < 100; i++) ports.push(await freePort());
  t.notOk(
    ports.some((p) => busy.has(p)),
    'none of the held ports',
  );
});
