// The ports test-support hands out for services a test starts (test/support/redis-server.ts
// freePort): below the kernel's ephemeral range, so that no outgoing connection takes one in the
// moment between the pick and the service's listen (a tool-host once failed with EADDRINUSE so).
import fs from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { freePort } from './support/redis-server.js';

const range = fs
  .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
  .trim()
  .split(/\s+/)
  .map(Number);

t.test('each port is free, handed out once, and below the ephemeral range', async (t) => {
  const low = range[0]!;
  const ports: number[] = [];
  for (let i = 0; i < 40; i++) ports.push(await freePort());
  t.equal(new Set(ports).size, ports.length, 'no port handed out twice');
  t.ok(
    ports.every((p) => p >= low - 10_000 && p < low),
    `all within [${low - 10_000}, ${low - 1}]: ${ports.join(', ')}`,
  );
  for (const port of ports.slice(0, 5)) {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    t.pass(`${port} listened on`);
    await new Promise((r) => server.close(r));
  }
});

t.test('a port something listens on is never handed out', async (t) => {
  // Hold every port of a slice of the range the picks come from: none of them may come back.
  const low = range[0]!;
  const held: net.Server[] = [];
  for (let port = low - 10_000; port < low - 9_000; port++) {
    const server = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) held.push(server);
  }
  t.teardown(() => Promise.all(held.map((s) => new Promise((r) => s.close(r)))));
  const busy = new Set(held.map((s) => (s.address() as net.AddressInfo).port));
  const ports: number[] = [];
  for (let i = 0; i < 100; i++) ports.push(await freePort());
  t.notOk(
    ports.some((p) => busy.has(p)),
    'none of the held ports',
  );
});
