import {
  loadCodeAgents,
  loadConfig,
  logFormat,
  loggerOptions,
  prettyOptions,
  redactConfig,
  serviceEnv,
  startTracing,
} from '@agentmesh/shared';
import { pino } from 'pino';
import { buildRunner, type Runner } from './runner.js';

const env = serviceEnv(process.env);
// Off, and free, unless an OTEL_* exporter is configured (DESIGN §15).
const tracing = await startTracing(process.env, 'agentmesh-runner');
// JSON lines, or human-readable ones on a terminal (npm start says which through LOG_FORMAT).
const options = loggerOptions('agent-runner', env.logLevel);
const log =
  logFormat(env.logFormat, process.stdout.isTTY === true) === 'pretty'
    ? pino(options, (await import('pino-pretty')).default(prettyOptions()))
    : pino(options);
// Signals are handled before the runner exists: its workers take jobs before buildRunner returns,
// and a SIGTERM in that window must drain them, not kill the process mid-call.
let runner: Promise<Runner> | undefined;
let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'draining: no new jobs; finishing the ones in hand');
  const built = await runner?.catch(() => undefined);
  await built?.close();
  await tracing.shutdown(); // the last spans go out
  process.exit(0);
};
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
try {
  const config = await loadConfig(env.configFile, process.env);
  log.debug({ config: redactConfig(config) }, 'config loaded'); // secrets redacted (docs/reference/configuration.md)
  runner = buildRunner({
    config,
    codeAgents: await loadCodeAgents(config),
    redisUrl: env.redisUrl,
    redisClusterNodes: env.redisClusterNodes,
    prefix: env.prefix,
    queueFastPath: env.queueFastPath,
    toolHostUrl: env.toolHostUrl ?? config.toolHost,
    agents: env.runnerAgents,
    concurrency: env.runnerConcurrency,
    internalToken: env.internalToken,
    retentionSeconds: env.retentionSeconds,
    sessionTtlSeconds: env.sessionTtlSeconds,
    sessionMaxBytes: env.sessionMaxBytes,
    limits: {
      maxDepth: env.maxDepth,
      maxDelegationsPerTurn: env.maxDelegationsPerTurn,
      maxResultBytes: env.maxResultBytes,
      maxRecoveries: env.maxRecoveries,
      maxCallsPerTurn: env.maxCallsPerTurn,
      maxModelReplyBytes: env.maxModelReplyBytes,
      remoteRequestMs: env.remoteRequestSeconds * 1000,
    },
    lockDurationMs: env.lockDurationMs,
    metricsPort: env.runnerMetricsPort,
    metricsHost: env.host,
    drainMs: env.drainMs,
    log,
  });
  await runner;
} catch (e) {
  log.fatal({ err: (e as Error).message }, 'agent-runner failed to start');
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
}
