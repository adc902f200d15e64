// The modules at the root of src/ and what the package exports from it: invocation ids, serviceEnv,
// the entries (no Redis client reachable from index.ts, nothing outside Node from settings.ts), and
// the error registry against its reference page.

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { isMeshError } from '../src/errors/mesh-error.js';
import { childId, isInvocationId, isRootId, newRootId, rootOf } from '../src/ids.js';
import { ERROR_CODES } from '../src/index.js';
import { type ServiceEnv, serviceEnv } from '../src/service-env.js';

t.test('ids: newRootId, childId, rootOf', async (t) => {
  t.test('root ids are well formed and distinct across the random pool refills', async (t) => {
    const ids = Array.from({ length: 1000 }, () => newRootId()); // ~4 refills of 256 ids
    t.ok(ids.every(isRootId), 'inv_ + 32 hex digits');
    t.equal(new Set(ids).size, ids.length, 'no id twice');
    // The bits are spread: every hex digit appears in every position of some id.
    const seen = Array.from({ length: 32 }, () => new Set<string>());
    for (const id of ids) for (let i = 0; i < 32; i++) seen[i]!.add(id[4 + i]!);
    t.ok(
      seen.every((s) => s.size === 16),
      'no position is fixed',
    );
  });

  t.test('a child id is deterministic and names its root', async (t) => {
    const root = newRootId();
    const child = childId(root, 't0-call0');
    t.equal(child, childId(root, 't0-call0'));
    t.not(child, childId(root, 't0-call1'));
    t.ok(isInvocationId(child));
    t.notOk(isRootId(child));
    t.equal(rootOf(childId(child, 't1-call0')), root, 'a grandchild too');
  });
});

t.test('serviceEnv', async (t) => {
  // serviceEnv: each variable's default, parsing and refusal, as the services and npm start read them.

  t.test('an empty environment gives every default', async (t) => {
    t.match(serviceEnv({}), {
      configFile: './mesh.yaml',
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'mesh',
      queueFastPath: true,
      gatewayPort: 3000,
      toolHostPort: 3002,
      toolHostUrl: undefined,
      runnerAgents: undefined,
      runnerConcurrency: 256,
      drainMs: 30_000,
      host: '127.0.0.1',
      allowAnonymous: false,
      maxTimeoutSeconds: 86_400,
      defaultTimeoutSeconds: 600,
      maxModelReplyBytes: 4 * 1024 * 1024,
      maxCallsPerTurn: 64,
      maxStreamsPerKey: 32,
      maxStreams: 1024,
      maxForkRecords: 10_000,
      maxForkBytes: 32 * 1024 * 1024,
    });
  });

  t.test('each variable is read into its setting', async (t) => {
    const rows: [env: Record<string, string>, expected: Partial<ServiceEnv>][] = [
      [{ HOST: '0.0.0.0' }, { host: '0.0.0.0' }],
      [{ HOST: '' }, { host: '127.0.0.1' }],
      [{ GATEWAY_PORT: '0' }, { gatewayPort: 0 }],
      [{ REDIS_URL: 'redis://r:1/2' }, { redisUrl: 'redis://r:1/2' }],
      [{ TOOL_HOST_URL: 'http://t:9' }, { toolHostUrl: 'http://t:9' }],
      [{ RUNNER_AGENTS: ' a, b ,,c' }, { runnerAgents: ['a', 'b', 'c'] }],
      [{ MESH_ALLOW_ANONYMOUS: 'true' }, { allowAnonymous: true }],
      [{ MESH_ALLOW_ANONYMOUS: 'yes' }, { allowAnonymous: false }],
      [{ RUNNER_DRAIN_MS: '0' }, { drainMs: 0 }],
      [{ MESH_QUEUE_FASTPATH: 'off' }, { queueFastPath: false }],
      [{ MESH_QUEUE_FASTPATH: 'on' }, { queueFastPath: true }],
      [{ MESH_MAX_CALLS_PER_TURN: '5' }, { maxCallsPerTurn: 5 }],
      [{ MESH_PUBLIC_URL: 'https://mesh.example.com' }, { publicUrl: 'https://mesh.example.com' }],
      [{}, { mcpWaitSeconds: 300 }],
      [{ MESH_MCP_WAIT_SECONDS: '5' }, { mcpWaitSeconds: 5 }],
      [{}, { streamBufferBytes: 1024 * 1024 }],
      [{ MESH_STREAM_BUFFER_BYTES: '65536' }, { streamBufferBytes: 65536 }],
      [
        { MESH_MAX_FORK_RECORDS: '50', MESH_MAX_FORK_BYTES: '4096' },
        { maxForkRecords: 50, maxForkBytes: 4096 },
      ],
    ];
    for (const [env, expected] of rows) t.match(serviceEnv(env), expected, JSON.stringify(env));
  });

  t.test('every bad value is refused at once, each named by its variable', async (t) => {
    const rows: [env: Record<string, string>, paths: string[]][] = [
      [{ GATEWAY_PORT: 'x' }, ['GATEWAY_PORT']],
      [{ RUNNER_CONCURRENCY: '0' }, ['RUNNER_CONCURRENCY']],
      [{ MESH_MAX_DEPTH: '1.5', RUNNER_LOCK_MS: '10' }, ['MESH_MAX_DEPTH', 'RUNNER_LOCK_MS']],
      [{ MESH_PREFIX: 'a:b' }, ['MESH_PREFIX']],
      [{ MESH_QUEUE_FASTPATH: 'false' }, ['MESH_QUEUE_FASTPATH']],
      [{ MESH_MCP_WAIT_SECONDS: '0' }, ['MESH_MCP_WAIT_SECONDS']],
      [{ MESH_STREAM_BUFFER_BYTES: '1000' }, ['MESH_STREAM_BUFFER_BYTES']],
      [
        { MESH_MAX_FORK_RECORDS: '0', MESH_MAX_FORK_BYTES: '10' },
        ['MESH_MAX_FORK_RECORDS', 'MESH_MAX_FORK_BYTES'],
      ],
      [
        { MESH_DEFAULT_TIMEOUT_SECONDS: '100', MESH_MAX_TIMEOUT_SECONDS: '10' },
        ['MESH_DEFAULT_TIMEOUT_SECONDS'],
      ],
    ];
    for (const [env, paths] of rows) {
      try {
        serviceEnv(env);
        t.fail(`${JSON.stringify(env)} was accepted`);
      } catch (e) {
        t.ok(isMeshError(e, 'invalid_config'), JSON.stringify(env));
        t.strictSame(
          (e as { details: { path: string }[] }).details.map((d) => d.path),
          paths,
          JSON.stringify(env),
        );
      }
    }
  });
});

t.test('the entries: index.ts, redis-side.ts and settings.ts', async (t) => {
  // The package root is the pure core (issue 30): no Redis client is reachable from it, however deep,
  // type-only imports included. What talks to Redis is the Redis-side entry (@agentmesh/shared/redis).
  // The settings entry (@agentmesh/shared/settings) reaches no package at all outside Node.

  const SRC = fileURLToPath(new URL('../src/', import.meta.url));
  /** Packages that open or drive Redis connections. */
  const REDIS_CLIENTS = ['ioredis', 'bullmq'];
  // Static, side-effect and dynamic imports, type-only ones included; a specifier holds no whitespace.
  const IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]([^'"\s]+)['"]/gm;

  /** Every package `entry` reaches through the source files it imports, with the path that reaches it. */
  function reachedPackages(entry: string): Map<string, string[]> {
    const reached = new Map<string, string[]>();
    const seen = new Set<string>();
    const visit = (file: string, path: string[]) => {
      if (seen.has(file)) return;
      seen.add(file);
      const here = [...path, relative(SRC, file)];
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        if (spec!.startsWith('.')) visit(resolve(dirname(file), spec!.replace(/\.js$/, '.ts')), here);
        else if (!reached.has(spec!)) reached.set(spec!, here);
      }
    };
    visit(join(SRC, entry), []);
    return reached;
  }

  const redisClientsOf = (entry: string) =>
    [...reachedPackages(entry)]
      .filter(([name]) => REDIS_CLIENTS.some((c) => name === c || name.startsWith(`${c}/`)))
      .map(([name, path]) => `${path.join(' -> ')} imports ${name}`);

  t.test('the Redis side reaches a Redis client, so the reading finds one where it is', async (t) => {
    t.match(redisClientsOf('redis-side.ts'), [/imports ioredis$/]);
  });

  t.test('the package root reaches no Redis client', async (t) => {
    const reached = reachedPackages('index.ts');
    t.ok(reached.has('@sinclair/typebox'), 'the imports of the root were read');
    t.strictSame(redisClientsOf('index.ts'), []);
  });

  t.test('the settings entry reaches no package outside Node, so a launcher reads it at once', async (t) => {
    const outside = [...reachedPackages('settings.ts')]
      .filter(([name]) => !name.startsWith('node:'))
      .map(([name, path]) => `${path.join(' -> ')} imports ${name}`);
    t.strictSame(outside, []);
  });
});

t.test('ERROR_CODES and docs/reference/errors.md', async (t) => {
  // The errors reference (docs/reference/errors.md) and the error registry say the same thing (STYLE: Errors).

  t.test(
    "the errors reference's table lists every code with its status, retryability, fault and message",
    async (t) => {
      const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/reference/errors.md'), 'utf8');
      const rows = [
        ...doc.matchAll(
          /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|\s*(user|model|system)\s*\|\s*(.+?)\s*\|$/gm,
        ),
      ].map((m) => ({
        code: m[1]!,
        status: Number(m[2]),
        retryable: m[3] === 'yes',
        fault: m[4],
        message: m[5],
      }));
      const registry = Object.entries(ERROR_CODES).map(([code, s]) => ({
        code,
        status: s.status,
        retryable: s.retryable,
        fault: s.fault,
        message: s.message,
      }));
      t.same(rows, registry);
    },
  );
});
