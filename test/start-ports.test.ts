// `npm start` checks every port it would listen on before it starts anything.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { stripVTControlCharacters } from 'node:util';
import t from 'tap';
import { npmStart, startEnv } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';

function holdPort(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

t.test(
  'a taken gateway port stops npm start before anything starts, naming the port and its holder',
  async (t) => {
    const gatewayPort = await freePort();
    const toolHostPort = await freePort();
    const redisPort = await freePort();
    const holder = await holdPort(gatewayPort);
    t.teardown(() => holder.close());
    const npm = npmStart(
      startEnv({
        GATEWAY_PORT: String(gatewayPort),
        TOOL_HOST_PORT: String(toolHostPort),
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        LOG_FORMAT: 'pretty',
      }),
    );
    t.teardown(() => npm.kill());
    t.equal(await npm.exited, 1, 'it exits with 1');
    const output = npm.output();
    // The holder is this test process: /proc names it.
    t.match(
      output,
      `GATEWAY_PORT=${gatewayPort}: port ${gatewayPort} is already taken by pid ${process.pid} (`,
      'it names the port, the variable and the process holding it',
    );
    t.match(output, 'nothing was started');
    t.notMatch(output, /redis/i, 'no Redis was looked for or started');
    t.notMatch(output, /mesh\s+\| ready|\/docs/, 'it never says ready');
  },
);

t.test('the same port for two services is refused before anything starts', async (t) => {
  const port = await freePort();
  const npm = npmStart(
    startEnv({ GATEWAY_PORT: String(port), TOOL_HOST_PORT: String(port), LOG_FORMAT: 'json' }),
  );
  t.teardown(() => npm.kill());
  t.equal(await npm.exited, 1);
  const lines = npm
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; service: string; msg: string });
  t.match(
    lines,
    [
      {
        level: 50,
        service: 'mesh',
        msg: `TOOL_HOST_PORT and GATEWAY_PORT are both ${port}: every service needs a port of its own.`,
      },
    ],
    'a JSON error line names both variables',
  );
  t.notOk(
    lines.some((l) => l.msg.startsWith('ready')),
    'it never says ready',
  );
});

t.test('on a terminal npm start writes readable lines, not JSON', async (t) => {
  const gatewayPort = await freePort();
  const holder = await holdPort(gatewayPort);
  t.teardown(() => holder.close());
  // util-linux `script` gives npm start a pseudo-terminal for its stdout.
  const env = startEnv({ GATEWAY_PORT: String(gatewayPort), TOOL_HOST_PORT: String(await freePort()) });
  const run = spawn('script', ['-qec', 'npm start', '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  t.teardown(() => run.kill('SIGKILL'));
  const code = await new Promise((resolve) => run.once('exit', resolve));
  t.equal(code, 1, 'it exits with 1');
  t.match(
    stripVTControlCharacters(output),
    new RegExp(`^mesh\\s+\\| GATEWAY_PORT=${gatewayPort}: port ${gatewayPort} is already taken`, 'm'),
    'a `mesh |` line, as on a terminal',
  );
  t.notMatch(output, '{"level"', 'no JSON');
});

t.test('an unknown LOG_FORMAT is refused', async (t) => {
  const npm = npmStart(startEnv({ GATEWAY_PORT: String(await freePort()), LOG_FORMAT: 'xml' }));
  t.teardown(() => npm.kill());
  t.equal(await npm.exited, 1);
  t.match(npm.output(), 'LOG_FORMAT must be json or pretty, got "xml".');
});
