// Secure by default (docs/reference/rest-api.md, issue 7 defect 7): a gateway on a non-loopback address without
// MESH_API_KEYS refuses to start and says why, unless MESH_ALLOW_ANONYMOUS=true (then it warns);
// docker-compose.yml publishes the gateway on loopback and requires the internal token.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

const mesh = await startMesh(t, { agentsYaml: '  chat: {instructions: "@agent chat"}\n' });
const noSecrets = { MESH_API_KEYS: '', MESH_ALLOW_ANONYMOUS: '', MESH_INTERNAL_TOKEN: '' };

t.test('a gateway on 0.0.0.0 without API keys exits 1 and says why', async (t) => {
  const port = await freePort();
  const svc = startService(t, 'gateway', {
    ...mesh.env,
    ...noSecrets,
    HOST: '0.0.0.0',
    GATEWAY_PORT: String(port),
  });
  t.equal(await svc.exited, 1, 'it exits with status 1');
  t.match(svc.output(), /Refusing to start: the gateway listens on 0\.0\.0\.0/);
  t.match(svc.output(), /MESH_API_KEYS is not set/);
  t.match(svc.output(), /MESH_ALLOW_ANONYMOUS=true/, 'it names the way out');
});

t.test('with MESH_ALLOW_ANONYMOUS=true it starts on 0.0.0.0 and logs a warning', async (t) => {
  const port = await freePort();
  const svc = startService(t, 'gateway', {
    ...mesh.env,
    ...noSecrets,
    HOST: '0.0.0.0',
    GATEWAY_PORT: String(port),
    MESH_ALLOW_ANONYMOUS: 'true',
  });
  const health = await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
    60_000,
    () => `the gateway to serve:\n${svc.output()}`,
  );
  t.ok(health);
  const warning = svc
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .find((l) => /anyone who reaches it may use it/.test(l.msg));
  t.equal(warning?.level, 40, 'the warning is logged at warn');
});

t.test('on loopback without keys it starts without a warning', async (t) => {
  const port = await freePort();
  const svc = startService(t, 'gateway', {
    ...mesh.env,
    ...noSecrets,
    HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
  });
  await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
    60_000,
    () => `the gateway to serve:\n${svc.output()}`,
  );
  t.notMatch(svc.output(), /anyone who reaches it/);
});

t.test('docker-compose.yml publishes the gateway on loopback and requires the internal token', async (t) => {
  const file = path.resolve(import.meta.dirname, '../docker-compose.yml');
  const compose = parse(fs.readFileSync(file, 'utf8'), { merge: true }) as {
    services: Record<string, { ports?: string[]; environment?: Record<string, string> }>;
  };
  const { gateway, 'tool-host': toolHost, 'agent-runner': runner } = compose.services;
  t.strictSame(
    gateway?.ports,
    [`\${GATEWAY_BIND:-127.0.0.1}:3000:3000`],
    'the gateway is published on 127.0.0.1',
  );
  for (const [name, svc] of [
    ['tool-host', toolHost],
    ['agent-runner', runner],
  ] as const) {
    t.match(
      svc?.environment?.MESH_INTERNAL_TOKEN,
      /^\$\{MESH_INTERNAL_TOKEN:\?[^}]*set MESH_INTERNAL_TOKEN[^}]*\}$/,
      `${name} requires MESH_INTERNAL_TOKEN and says how to set it`,
    );
  }
  t.equal(
    gateway?.environment?.MESH_ALLOW_ANONYMOUS,
    `\${MESH_ALLOW_ANONYMOUS:-}`,
    'the gateway takes MESH_ALLOW_ANONYMOUS from the environment, never true by default',
  );
  for (const [name, svc] of Object.entries(compose.services)) {
    if (name !== 'gateway')
      t.notOk(
        svc.environment && 'MESH_ALLOW_ANONYMOUS' in svc.environment,
        `${name} does not get MESH_ALLOW_ANONYMOUS`,
      );
    for (const p of svc.ports ?? [])
      t.match(p, /^\$\{GATEWAY_BIND:-127\.0\.0\.1\}:/, `${name} publishes on loopback`);
  }
});
