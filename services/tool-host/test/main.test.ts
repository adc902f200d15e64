// `npm run tool-host` refuses to start on a bad tools module, naming the file and the path, and
// on a reachable address without its token unless anonymous access is intended (docs/reference/rest-api.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService } from '@agentmesh/test-support/mesh';
import { freePort, startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t, { type Test } from 'tap';

t.test('a tools module exporting a _subagent_ tool stops the tool-host with the file and path', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-tool-host-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const module = path.join(import.meta.dirname, 'fixtures', 'reserved-tool.mjs');
  const config = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(config, `models: {}\ntools: ['${module}']\nagents: {}\n`);
  const svc = startService(t, 'tool-host', {
    MESH_CONFIG: config,
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    TOOL_HOST_PORT: '0',
  });
  const code = await svc.exited;
  t.not(code, 0, 'the process exits with a failure code');
  t.not(code, null, 'the process exits by itself');
  const output = svc.output();
  t.match(
    output,
    `${config}: tools[0] (${module}: export sneaky): Tool name _subagent_x must not start with the reserved prefix '_subagent_'.`,
  );
  t.notMatch(output, /^\s+at /m, 'no stack trace');
});

t.test('HOST=0.0.0.0 without MESH_INTERNAL_TOKEN stops the tool-host saying why', async (t) => {
  const svc = startService(t, 'tool-host', {
    MESH_CONFIG: emptyConfig(t),
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    TOOL_HOST_PORT: String(await freePort()),
    HOST: '0.0.0.0',
    MESH_INTERNAL_TOKEN: '',
    MESH_ALLOW_ANONYMOUS: '',
  });
  const code = await svc.exited;
  t.not(code, 0, 'the process exits with a failure code');
  t.not(code, null, 'the process exits by itself');
  t.match(
    svc.output(),
    'Refusing to start: the tool-host listens on 0.0.0.0, reachable from other machines, and MESH_INTERNAL_TOKEN is not set.',
  );
  t.notMatch(svc.output(), /^\s+at /m, 'no stack trace');
});

t.test('with MESH_ALLOW_ANONYMOUS=true it starts on HOST and logs the warning', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const port = await freePort();
  const svc = startService(t, 'tool-host', {
    MESH_CONFIG: emptyConfig(t),
    REDIS_URL: redis.url,
    TOOL_HOST_PORT: String(port),
    HOST: '0.0.0.0',
    MESH_INTERNAL_TOKEN: '',
    MESH_ALLOW_ANONYMOUS: 'true',
  });
  const health = await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).json(),
    60_000,
    () => `the tool-host to answer\n${svc.output()}`,
  );
  t.strictSame(health, { status: 'ok' });
  const warning = svc
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .find((l) => l.level === 40);
  t.equal(
    warning?.msg,
    'the tool-host listens on 0.0.0.0, reachable from other machines, and MESH_INTERNAL_TOKEN is not set: anyone who reaches it may use it (MESH_ALLOW_ANONYMOUS=true)',
  );
});

function emptyConfig(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-tool-host-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(config, 'models: {}\ntools: []\nagents: {}\n');
  return config;
}
