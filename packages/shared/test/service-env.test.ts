// serviceEnv: each variable's default, parsing and refusal, as the services and npm start read them.
import t from 'tap';
import { isMeshError } from '../src/errors/mesh-error.js';
import { type ServiceEnv, serviceEnv } from '../src/service-env.js';

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
