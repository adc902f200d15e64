import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildRunner, type Runner, type RunnerLimits, type RunnerOptions } from '@agentmesh/agent-runner';
import { buildGateway, type Gateway, type GatewayOptions } from '@agentmesh/gateway';
import {
  keyLayout,
  loadCodeAgents,
  type MeshConfig,
  parseConfig,
  type ToolDefinition,
} from '@agentmesh/shared';
import { connectRedis } from '@agentmesh/shared/redis';
import { buildToolHost, loadToolDefinitions, OutcomeStore, publishCatalogue } from '@agentmesh/tool-host';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Test } from 'tap';
import { type FakeModel, type FakeScript, startFakeModel } from './fake-model.js';
import { injector } from './inject.js';
import { withoutCoverage } from './npm-start.js';
import { startRedisCluster, type TestRedisCluster } from './redis-cluster.js';
import { freePort, startRedis, type TestRedis } from './redis-server.js';
import { spawnUntracked } from './untracked-spawn.js';
import { waitUntil } from './wait-until.js';

/** A whole mesh started in-process for one test: Redis, fake model, tool-host, runners, gateway. */
export interface TestMesh {
  /** The Redis server; with `cluster`, its first node (which cannot be restarted). */
  redis: TestRedis;
  /** With `cluster: true`: the three-master Redis Cluster every service uses. */
  cluster?: TestRedisCluster;
  model: FakeModel;
  config: MeshConfig;
  toolHost: FastifyInstance;
  toolHostUrl: string;
  gateway: Gateway;
  runners: Runner[];
  prefix: string;
  /** The config written to a file, for services started as processes (`startService`). */
  configFile: string;
  /** With `toolsModule`: the tool-host process and the env to start another one like it. */
  toolHostProcess?: ReturnType<typeof startService>;
  toolHostProcessEnv?: Record<string, string>;
  /** The env a service process needs to join this mesh. */
  env: Record<string, string>;
  /**
   * A client on the test's Redis (closed at teardown). With `cluster` it is an ioredis `Cluster`,
   * typed `Redis` so that single-server tests keep MONITOR and `duplicate()`: commands only there.
   */
  client: Redis;
  /** POST /agents/{agent}/invoke through the gateway (inject). */
  invoke(
    agent: string,
    body: unknown,
    query?: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; json: any }>;
  /** Any request through the gateway (inject); `headers` replace the mesh's default `headers`. */
  request(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    opts?: { payload?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  /** Polls GET /invocations/{id} until it has `status`, and returns that view (fails after `ms`). */
  waitForStatus(id: string, status: string, ms?: number, what?: () => string): Promise<any>;
}

/** Options: the agents part of a mesh.yaml (with `{{model}}` unused), tools in code, runners. */
export interface MeshOptions {
  /** The `agents:` mapping of the config, as YAML text indented by two spaces per level. */
  agentsYaml: string;
  tools?: ToolDefinition[];
  script?: FakeScript;
  runners?: number;
  concurrency?: number;
  watchdog?: { intervalMs: number; minParkedMs: number };
  /** Extra flow-mapping entries for the model entry, e.g. `, maxConcurrency: 2`. */
  modelOptions?: string;
  /** The agents in-process runners host (default all). */
  runnerAgents?: string[];
  /** Redis with AOF (`appendfsync always`), for tests that restart it. */
  aof?: boolean;
  /** Every service on a local three-master Redis Cluster instead of one server (docs/guides/deploying.md). */
  cluster?: boolean;
  /**
   * The queue fast path of the in-process gateway and runners (docs/architecture/queue-fast-path.md):
   * MESH_QUEUE_FASTPATH of the test's environment (on unless `off`) unless told. Service processes
   * (`startService`) read the same variable from the environment they inherit.
   */
  queueFastPath?: boolean;
  /**
   * A tools module for a tool-host started as a process (`npm run tool-host`) instead of in-process;
   * `toolHostEnv` is added to its environment.
   */
  toolsModule?: string;
  toolHostEnv?: Record<string, string>;
  /** Picks the tool-host process's port (a free one unless told: `freePort`). */
  toolHostPort?: () => Promise<number>;
  /** More `tools:` entries as YAML flow text (`{mcp: {url: …}}`); like `toolsModule`, served by a tool-host process. */
  toolsYaml?: string[];
  /** The gateway's MESH_API_KEYS (auth off when absent). */
  apiKeys?: string;
  /** Headers the helpers (`invoke`, `get`, `waitForStatus`, `request`) send unless told others. */
  headers?: Record<string, string>;
  /** The in-process runners' limits, over the test defaults (RUNNER_DEFAULTS) and the runner's own. */
  limits?: Partial<RunnerLimits>;
  /** More options of the in-process gateway, over the test defaults. */
  gateway?: Partial<GatewayOptions>;
}

const silent = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The queue fast path as the test's environment sets it now: `MESH_QUEUE_FASTPATH=off npx tap …`
 * runs the in-process gateway and runners, and the service processes, on stock BullMQ.
 */
export const queueFastPath = (): boolean => process.env.MESH_QUEUE_FASTPATH !== 'off';

/**
 * For a test of the fast path itself (its counts, its reclaim): on in this test
 * process and every service it starts, whatever mode the run is in.
 */
export function pinQueueFastPath(): void {
  process.env.MESH_QUEUE_FASTPATH = 'on';
}

/** What every in-process runner of a test mesh gets unless told otherwise. */
const RUNNER_DEFAULTS = {
  retentionSeconds: 3600,
  limits: { maxDepth: 8, maxDelegationsPerTurn: 16, maxResultBytes: 65536, maxRecoveries: 5 },
  lockDurationMs: 3000,
  metricsPort: 0,
  log: silent,
};

/** Starts a mesh and registers its teardown on `t` (everything stops even when the test fails). */
export async function startMesh(t: Test, opts: MeshOptions): Promise<TestMesh> {
  const cluster = opts.cluster ? await startRedisCluster() : undefined;
  const redis = cluster ? clusterNode(cluster) : await startRedis({ aof: opts.aof ?? false });
  t.teardown(() => redis.stop());
  const redisEnv: Record<string, string> = cluster
    ? { REDIS_URL: redis.url, REDIS_CLUSTER_NODES: cluster.nodesEnv }
    : { REDIS_URL: redis.url };
  const redisClusterNodes = cluster?.nodes;
  const model = await startFakeModel(opts.script);
  t.teardown(() => model.close());
  const prefix = 'mesh';
  const toolEntries = [...(opts.toolsModule ? [`'${opts.toolsModule}'`] : []), ...(opts.toolsYaml ?? [])];
  const toolsList = `[${toolEntries.join(', ')}]`;
  const text = `models:\n  default: {provider: openai, baseUrl: '${model.url}', apiKey: test-key, model: fake${opts.modelOptions ?? ''}}\ntools: ${toolsList}\nagents:\n${opts.agentsYaml}`;
  const configFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-config-')), 'mesh.yaml');
  fs.writeFileSync(configFile, text);
  const config = parseConfig(text, configFile, {}, 'yaml');
  const codeAgents = await loadCodeAgents(config);
  const tools = loadToolDefinitions(opts.tools ?? []);
  const client = connectRedis(
    { url: redis.url, clusterNodes: redisClusterNodes },
    { maxRetriesPerRequest: null },
  ) as Redis;
  t.teardown(() => client.disconnect());
  const toolHost = buildToolHost({ tools, outcomes: new OutcomeStore(client, keyLayout(prefix), 3600) });
  let toolHostUrl: string;
  let toolHostProcess: ReturnType<typeof startService> | undefined;
  let toolHostProcessEnv: Record<string, string> | undefined;
  if (toolEntries.length > 0) {
    ({
      url: toolHostUrl,
      started: toolHostProcess,
      env: toolHostProcessEnv,
    } = await startToolHostProcess(
      t,
      client,
      keyLayout(prefix).catalogue(),
      (port) => ({ MESH_CONFIG: configFile, ...redisEnv, TOOL_HOST_PORT: String(port), ...opts.toolHostEnv }),
      opts.toolHostPort,
    ));
  } else {
    await toolHost.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(() => toolHost.close());
    toolHostUrl = `http://127.0.0.1:${(toolHost.server.address() as { port: number }).port}`;
    await publishCatalogue(
      client,
      keyLayout(prefix),
      tools.map((x) => x.info),
    );
  }
  const runners: Runner[] = [];
  for (let i = 0; i < (opts.runners ?? 1); i++) {
    const runner = await buildRunner({
      config,
      redisUrl: redis.url,
      redisClusterNodes,
      prefix,
      toolHostUrl,
      concurrency: opts.concurrency ?? 16,
      codeAgents,
      agents: opts.runnerAgents,
      ...RUNNER_DEFAULTS,
      limits: { ...RUNNER_DEFAULTS.limits, ...opts.limits },
      ...(opts.watchdog ? { watchdog: opts.watchdog } : {}),
      queueFastPath: opts.queueFastPath ?? queueFastPath(),
    });
    t.teardown(() => runner.close());
    runners.push(runner);
  }
  const gateway = await buildGateway({
    config,
    codeAgents,
    redisUrl: redis.url,
    redisClusterNodes,
    prefix,
    defaultTimeoutSeconds: 60,
    retentionSeconds: 3600,
    ...(opts.apiKeys === undefined ? {} : { apiKeys: opts.apiKeys }),
    ...opts.gateway,
  });
  t.teardown(() => gateway.close());
  await gateway.app.ready();
  const inject = injector(gateway.app, opts.headers);
  return {
    redis,
    ...(cluster ? { cluster } : {}),
    model,
    config,
    toolHost,
    toolHostUrl,
    gateway,
    runners,
    prefix,
    configFile,
    ...(toolHostProcess ? { toolHostProcess, toolHostProcessEnv } : {}),
    env: { MESH_CONFIG: configFile, ...redisEnv, TOOL_HOST_URL: toolHostUrl, MESH_PREFIX: prefix },
    client,
    invoke: (agent, body, query = 'wait=30', headers = opts.headers) =>
      inject('POST', `/agents/${agent}/invoke?${query}`, body, headers),
    get: (url, headers = opts.headers) => inject('GET', url, undefined, headers),
    request: (method, url, o = {}) => inject(method, url, o.payload, o.headers ?? opts.headers),
    waitForStatus: (id, status, ms = 60_000, what = () => `${id} to be ${status}`) =>
      waitUntil(
        async () => {
          const view = (await inject('GET', `/invocations/${id}`)).json;
          return view?.status === status ? view : undefined;
        },
        ms,
        what,
      ),
  };
}

/** Makes the mesh's own gateway listen on a free loopback port, for clients that speak HTTP; its base URL. */
export function listen(mesh: TestMesh): Promise<string> {
  return listenOnLoopback(mesh.gateway);
}

/** Makes `gateway` listen on a free loopback port; its base URL. */
async function listenOnLoopback(gateway: Gateway): Promise<string> {
  await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(gateway.app.server.address() as { port: number }).port}`;
}

/**
 * Another gateway on the mesh's config and Redis (options as startMesh's own, `extra` on top),
 * listening on a free loopback port; closed at teardown.
 */
export async function listenGateway(
  t: Test,
  mesh: TestMesh,
  extra: Partial<GatewayOptions> = {},
): Promise<{ gateway: Gateway; base: string }> {
  const gateway = await buildGateway({
    config: mesh.config,
    redisUrl: mesh.redis.url,
    prefix: mesh.prefix,
    defaultTimeoutSeconds: 60,
    retentionSeconds: 3600,
    ...extra,
  });
  t.teardown(() => gateway.close());
  return { gateway, base: await listenOnLoopback(gateway) };
}

/** Starts one more in-process runner on `mesh` (closed at teardown) with the mesh's settings and `extra`. */
export async function addRunner(
  t: Test,
  mesh: TestMesh,
  extra: Partial<RunnerOptions> = {},
): Promise<Runner> {
  const runner = await buildRunner({
    config: mesh.config,
    redisUrl: mesh.redis.url,
    prefix: mesh.prefix,
    toolHostUrl: mesh.toolHostUrl,
    concurrency: 4,
    queueFastPath: queueFastPath(),
    ...RUNNER_DEFAULTS,
    ...extra,
  });
  t.teardown(() => runner.close());
  return runner;
}

/**
 * Run compiled (the test tiers run .tap-build/, scripts/build-tests.mjs), a service starts as its
 * compiled main under node, with no TypeScript loader; from the sources, through its npm script
 * (tsx), as a developer starts it.
 */
const COMPILED = !import.meta.url.endsWith('.ts');
const SERVICE_MAIN = {
  gateway: 'services/gateway/src/main.js',
  runner: 'services/agent-runner/src/main.js',
  'tool-host': 'services/tool-host/src/main.js',
};

/** Starts a service (see COMPILED) in its own process group; killed at teardown. */
export function startService(
  t: Test,
  script: 'gateway' | 'runner' | 'tool-host',
  env: Record<string, string>,
): { proc: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-svc-')), `${script}.log`);
  const fd = fs.openSync(logFile, 'a');
  const [command, args] = COMPILED
    ? [process.execPath, [SERVICE_MAIN[script]]]
    : ['npm', ['run', '-s', script]];
  const proc = spawnUntracked(command, args, {
    cwd: path.resolve(import.meta.dirname, '../..'),
    // No coverage from it: tap maps no function of code loaded through tsx, and merged with the
    // in-process counts of the same files, that blanked whole modules in the report.
    env: withoutCoverage({ ...process.env, LOG_LEVEL: 'warn', ...env }),
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  t.teardown(async () => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
  });
  return { proc, output: () => fs.readFileSync(logFile, 'utf8'), exited };
}

/**
 * The tool-host as a process of its own on a free port, once it has published its catalogue
 * (`catalogueKey`). A port free when picked can be taken before the process listens on it (another
 * test file picked it too): a tool-host that exits with EADDRINUSE is started again on another
 * port, up to five times; one that exits for any other reason fails the test at once, with its
 * output, instead of after the wait.
 */
async function startToolHostProcess(
  t: Test,
  client: Redis,
  catalogueKey: string,
  envFor: (port: number) => Record<string, string>,
  pickPort: () => Promise<number> = freePort,
): Promise<{ url: string; started: ReturnType<typeof startService>; env: Record<string, string> }> {
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort();
    const env = envFor(port);
    const started = startService(t, 'tool-host', env);
    const exited = () => started.proc.exitCode !== null || started.proc.signalCode !== null;
    const outcome = await waitUntil(
      async () => (exited() ? 'exited' : (await client.exists(catalogueKey)) === 1 ? 'published' : undefined),
      60_000,
      () => `the tool-host to publish its catalogue; its output:\n${started.output()}`,
    );
    if (outcome === 'published') return { url: `http://127.0.0.1:${port}`, started, env };
    const output = started.output();
    if (!output.includes('EADDRINUSE') || attempt >= 5)
      throw new Error(`the tool-host exited before it published its catalogue; its output:\n${output}`);
  }
}

/** A cluster seen as a TestRedis: its first node's URL; stopping it stops the whole cluster. */
function clusterNode(cluster: TestRedisCluster): TestRedis {
  return {
    port: cluster.ports[0]!,
    url: `redis://127.0.0.1:${cluster.ports[0]}`,
    restart: () => Promise.reject(new Error('a test cluster cannot be restarted')),
    stop: () => cluster.stop(),
  };
}
