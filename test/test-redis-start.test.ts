// The test suite's own Redis: a server that exits before it answers (its port taken by another
// test file's process a moment after it was found free) is started again on another port.
import net from 'node:net';
import t from 'tap';
import { freePort, spawnRedis } from './support/redis-server.js';

t.test('a redis-server that exits before its PING is started again on another port', async (t) => {
  const ports: number[] = [];
  const { port, proc } = await spawnRedis((port) => {
    ports.push(port);
    // The first start fails as a taken port does: redis-server exits at once.
    return ports.length === 1
      ? ['--port', String(port), '--no-such-option']
      : ['--port', String(port), '--save', ''];
  });
  t.teardown(() => {
    proc.kill('SIGKILL');
  });
  t.equal(ports.length, 2, 'started twice');
  t.equal(port, ports[1], 'on the second port');
  const reply = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.once('error', reject);
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString());
    });
  });
  t.equal(reply, '+PONG\r\n');
});

t.test('five exits in a row fail with the port in the message', async (t) => {
  await t.rejects(
    spawnRedis((port) => ['--port', String(port), '--no-such-option']),
    /exited before it answered on \d+, five times/,
  );
});

t.test('freePort never gives one process the same port twice', async (t) => {
  const ports: number[] = [];
  for (let i = 0; i < 300; i++) ports.push(await freePort());
  t.equal(new Set(ports).size, ports.length);
});
