import {
  checkExposure,
  failedToStart,
  loadCodeAgents,
  loadConfig,
  redactConfig,
  startService,
} from '@agentmesh/shared';
import { buildGateway } from './app.js';

const { env, tracing, log } = await startService('gateway', 'agentmesh-gateway');
try {
  // Secure by default (docs/reference/rest-api.md): checked before anything connects or listens.
  const warning = checkExposure({
    service: 'gateway',
    host: env.host,
    secretVar: 'MESH_API_KEYS',
    secretSet: env.apiKeys !== undefined,
    allowAnonymous: env.allowAnonymous,
  });
  if (warning) log.warn(warning);
  const config = await loadConfig(env.configFile, process.env);
  log.debug({ config: redactConfig(config) }, 'config loaded'); // secrets redacted (docs/reference/configuration.md)
  const gateway = await buildGateway({
    config,
    codeAgents: await loadCodeAgents(config),
    redisUrl: env.redisUrl,
    redisClusterNodes: env.redisClusterNodes,
    prefix: env.prefix,
    defaultTimeoutSeconds: env.defaultTimeoutSeconds,
    retentionSeconds: env.retentionSeconds,
    apiKeys: env.apiKeys,
    logger: log,
    maxTimeoutSeconds: env.maxTimeoutSeconds,
    maxStreamsPerKey: env.maxStreamsPerKey,
    maxStreams: env.maxStreams,
    streamBufferBytes: env.streamBufferBytes,
    mcpWaitSeconds: env.mcpWaitSeconds,
    sessionTtlSeconds: env.sessionTtlSeconds,
    maxForkRecords: env.maxForkRecords,
    maxForkBytes: env.maxForkBytes,
    maxResultBytes: env.maxResultBytes,
    sessionMaxBytes: env.sessionMaxBytes,
    ...(env.publicUrl ? { publicUrl: env.publicUrl } : {}),
  });
  await gateway.app.listen({ port: env.gatewayPort, host: env.host });
  log.info({ docs: `http://${env.host}:${env.gatewayPort}/docs` }, 'gateway ready');
  const stop = async () => {
    await gateway.close(); // fastify's close finishes open requests first
    await tracing.shutdown(); // the last spans go out
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
} catch (e) {
  failedToStart(log, 'gateway', e);
}
