import {
  checkExposure,
  failedToStart,
  keyLayout,
  loadConfig,
  redactConfig,
  startService,
} from '@agentmesh/shared';
import { connectRedis } from '@agentmesh/shared/redis';
import { buildToolHost } from './app.js';
import { OutcomeStore } from './idempotency/outcome-store.js';
import { loadTools } from './load-tools.js';
import { mountMcpServers } from './mcp/mount-mcp-servers.js';
import { publishCatalogue } from './publish-catalogue.js';

const { env, tracing, log } = await startService('tool-host', 'agentmesh-tool-host');
try {
  // Secure by default (docs/reference/rest-api.md): refuse a reachable listener without a token, unless intended.
  const exposed = checkExposure({
    service: 'tool-host',
    host: env.host,
    secretVar: 'MESH_INTERNAL_TOKEN',
    secretSet: !!env.internalToken,
    allowAnonymous: env.allowAnonymous,
  });
  if (exposed) log.warn(exposed);
  const config = await loadConfig(env.configFile, process.env);
  log.debug({ config: redactConfig(config) }, 'config loaded'); // secrets redacted (docs/reference/configuration.md)
  const native = await loadTools(config);
  const mcp = await mountMcpServers(
    config,
    native.map((t) => t.info.name),
    log,
    undefined,
    env.mcpMaxTools,
  );
  const tools = [...native, ...mcp.tools];
  const redis = connectRedis(
    { url: env.redisUrl, clusterNodes: env.redisClusterNodes },
    { maxRetriesPerRequest: null },
  );
  redis.on('error', (e: Error) => log.warn({ err: e.message }, 'redis connection error'));
  const keys = keyLayout(env.prefix);
  // Outcomes outlive every invocation that could repeat the call: kept for the retention period.
  const outcomes = new OutcomeStore(redis, keys, env.retentionSeconds);
  const app = buildToolHost({
    tools,
    internalToken: env.internalToken,
    logger: log,
    outcomes,
    mcpServers: mcp.servers,
    maxResultBytes: env.maxResultBytes,
  });
  await app.listen({ port: env.toolHostPort, host: env.host });
  const version = await publishCatalogue(
    redis,
    keys,
    tools.map((t) => t.info),
  );
  log.info({ tools: tools.map((t) => t.info.name), version }, 'tool-host ready; catalogue published');
  const stop = async () => {
    await app.close();
    // After the app: calls still running on MCP servers end before their servers are closed.
    await Promise.all(mcp.servers.map((s) => s.close()));
    redis.disconnect();
    await tracing.shutdown(); // the last spans go out
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
} catch (e) {
  failedToStart(log, 'tool-host', e);
}
