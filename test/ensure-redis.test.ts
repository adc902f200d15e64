// npm start's private Redis (scripts/ensure-redis.ts): a port free when picked may be taken before
// redis-server binds it; the server then exits at once, and npm start tries another port instead
// of failing to start.
import net from 'node:net';
import t from 'tap';
import { ensureRedis, pingRedis } from '../scripts/ensure-redis.js';
import type { MeshOutput } from '../scripts/mesh-output.js';
import { freePort } from './support/redis-server.js';

const output: MeshOutput = { format: 'json', width: 8 };

/**
 * A port something listens on until the test ends: redis-server cannot bind it. It hangs up on
 * npm start's PING, as a stranger on the port would.
 */
async function heldPort(t: { teardown(fn: () => unknown): void }): Promise<number> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

t.test('a private redis-server whose port was taken starts again on another port', async (t) => {
  const taken = await heldPort(t);
  const free = await freePort();
  const picks = [taken, free];
  const said: string[] = [];
  // Nothing answers there, so npm start starts its own.
  const absent = `redis://127.0.0.1:${await freePort()}`;
  const redis = await ensureRedis(absent, (line) => said.push(line), output, [], {
    pickPort: async () => picks.shift()!,
  });
  t.teardown(() => redis.stop());
  t.equal(redis.url, `redis://127.0.0.1:${free}`, 'it runs on the second port');
  t.ok(await pingRedis(redis.url), 'and answers there');
  t.ok(
    said.includes(`the private redis-server exited before it answered on port ${taken}; trying another port`),
    'it said why it moved',
  );
  t.same(picks, [], 'two ports were picked');
});

t.test('a port where another Redis answers is passed over, not taken for its own', async (t) => {
  // A stranger that speaks RESP, holding the port: it answers the PING before ours has failed to bind.
  const stranger = net.createServer((socket) =>
    socket
      .on('error', () => {})
      .on('data', (data) => {
        const dir = '/var/lib/redis';
        const config = `*2\r\n$3\r\ndir\r\n$${dir.length}\r\n${dir}\r\n`;
        socket.write(String(data).startsWith('CONFIG') ? config : '+PONG\r\n');
      }),
  );
  await new Promise<void>((resolve) => stranger.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => stranger.close(() => resolve())));
  const taken = (stranger.address() as net.AddressInfo).port;
  const free = await freePort();
  const picks = [taken, free];
  const said: string[] = [];
  const redis = await ensureRedis(
    `redis://127.0.0.1:${await freePort()}`,
    (line) => said.push(line),
    output,
    [],
    {
      pickPort: async () => picks.shift()!,
    },
  );
  t.teardown(() => redis.stop());
  t.equal(redis.url, `redis://127.0.0.1:${free}`, 'its own server runs on the next port');
  t.ok(
    said.includes(
      `the private redis-server found another server answering on port ${taken}; trying another port`,
    ),
    'it said why it moved',
  );
});

t.test('after five taken ports it gives up, naming the last', async (t) => {
  const taken = await heldPort(t);
  let picked = 0;
  const said: string[] = [];
  const absent = `redis://127.0.0.1:${await freePort()}`;
  await t.rejects(
    ensureRedis(absent, (line) => said.push(line), output, [], {
      pickPort: async () => {
        picked++;
        return taken;
      },
    }),
    { message: `The private redis-server did not start on port ${taken} (see its output above).` },
  );
  t.equal(picked, 5, 'five ports were tried');
  t.equal(said.filter((line) => line.includes('trying another port')).length, 4);
});
