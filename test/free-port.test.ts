// npm start's demo model and private Redis take ports the OS picks, never one its services were told to use.
import net from 'node:net';
import t from 'tap';
import { freePort, freePortOutside, listenOutside } from '../scripts/free-port.js';

t.test('a pick on a reserved port is released and the OS asked again', async (t) => {
  const picks = [4000, 4001, 4002];
  const released: number[] = [];
  const held = await listenOutside(
    [4000, 4001],
    async () => ({ port: picks.shift()! }),
    async ({ port }) => {
      released.push(port);
    },
  );
  t.equal(held.port, 4002, 'the first pick outside the reserved ports is kept');
  t.same(released, [4000, 4001], 'each reserved pick was released before the next');
});

t.test('a listener that only ever lands on reserved ports gives up with the ports named', async (t) => {
  let listens = 0;
  await t.rejects(
    listenOutside(
      [4000],
      async () => {
        listens++;
        return { port: 4000 };
      },
      async () => {},
    ),
    { message: 'no free port outside 4000 after 20 picks' },
  );
  t.equal(listens, 20);
});

t.test('a real pick outside a reserved port can be listened on', async (t) => {
  const reserved = await freePort();
  const port = await freePortOutside([reserved]);
  t.not(port, reserved);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.equal((server.address() as net.AddressInfo).port, port);
});
