// A gateway alone for one test file: its own redis-server, the config's agents, an empty tool
// catalogue, and no tool-host, runner or model. Requests go through `app.inject`. What the gateway
// decides before a job runs (validation, auth, documents, error shapes, bounds) is tested on this;
// what needs a job to run is tested on a whole mesh (test/support/mesh.ts). See docs/guides/testing.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type KeyLayout,
  keyLayout,
  loadCodeAgents,
  type MeshConfig,
  parseConfig,
  queueName,
  type ToolInfo,
} from '@agentmesh/shared';
import { connectRedis } from '@agentmesh/shared/redis';
import { injector } from '@agentmesh/test-support/inject';
import { startRedis, type TestRedis } from '@agentmesh/test-support/redis-server';
import type { Redis } from 'ioredis';
import type { Test } from 'tap';
import { buildGateway, type Gateway, type GatewayOptions } from '../../src/index.js';

export interface TestGateway {
  gateway: Gateway;
  app: Gateway['app'];
  redis: TestRedis;
  /** A client on the test's Redis (closed at teardown). */
  client: Redis;
  config: MeshConfig;
  prefix: string;
  keys: KeyLayout;
  /** POST /agents/{agent}/invoke (default `?wait=0`: no runner would ever answer a wait). */
  invoke(
    agent: string,
    body: unknown,
    query?: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; json: any }>;
  /** Any request; `headers` replace the default `headers`. */
  request(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    opts?: { payload?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  /** Jobs waiting on each agent's queue: what an accepted invocation leaves for a runner. */
  queued(agent: string): Promise<number>;
}

export interface TestGatewayOptions {
  /** The `agents:` mapping of a mesh.yaml, indented by two spaces per level. */
  agentsYaml: string;
  /** The tools the catalogue lists, their `input` a JSON Schema (as a tool-host publishes them; none run here). */
  tools?: { name: string; description: string; input: unknown }[];
  /** Headers `invoke`, `get` and `request` send unless told others. */
  headers?: Record<string, string>;
  /** More options of buildGateway (apiKeys, bounds, timeouts). */
  gateway?: Partial<GatewayOptions>;
}

/** Starts a gateway on its own Redis and registers its teardown on `t`. */
export async function startGateway(t: Test, opts: TestGatewayOptions): Promise<TestGateway> {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const prefix = 'mesh';
  const keys = keyLayout(prefix);
  // No model is ever called here: the address is one nothing listens on.
  const text = `models:\n  default: {provider: openai, baseUrl: 'http://127.0.0.1:9', apiKey: test-key, model: fake}\ntools: []\nagents:\n${opts.agentsYaml}`;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-test-')), 'mesh.yaml');
  fs.writeFileSync(file, text);
  const config = parseConfig(text, file, {}, 'yaml');
  const codeAgents = await loadCodeAgents(config);
  const client = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null }) as Redis;
  t.teardown(() => client.disconnect());
  // The catalogue as the tool-host writes it (services/tool-host/src/publish-catalogue.ts): the
  // gateway has its plan at once and serves the config's agents.
  const tools: ToolInfo[] = (opts.tools ?? []).map(({ name, description, input }) => ({
    name,
    description,
    input: input as ToolInfo['input'],
    idempotent: false,
    source: 'native',
  }));
  await client.hset(keys.catalogue(), 'version', String(Date.now()), 'tools', JSON.stringify(tools));
  const gateway = await buildGateway({
    config,
    codeAgents,
    redisUrl: redis.url,
    prefix,
    defaultTimeoutSeconds: 60,
    retentionSeconds: 3600,
    ...opts.gateway,
  });
  t.teardown(() => gateway.close());
  await gateway.app.ready();
  const inject = injector(gateway.app, opts.headers);
  return {
    gateway,
    app: gateway.app,
    redis,
    client,
    config,
    prefix,
    keys,
    invoke: (agent, body, query = 'wait=0', headers = opts.headers) =>
      inject('POST', `/agents/${agent}/invoke?${query}`, body, headers),
    get: (url, headers = opts.headers) => inject('GET', url, undefined, headers),
    request: (method, url, o = {}) => inject(method, url, o.payload, o.headers ?? opts.headers),
    queued: async (agent) => client.llen(`${keys.bullPrefix}:${queueName(agent)}:wait`),
  };
}
