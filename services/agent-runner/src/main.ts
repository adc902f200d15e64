import { failedToStart, loadCodeAgents, loadConfig, redactConfig, startService } from '@agentmesh/shared';
import { buildRunner, type Runner } from './process/runner.js';

const { env, tracing, log } = await startService('agent-runner', 'agentmesh-runner');
// Signals are handled before the runner exists: its workers take jobs before buildRunner returns,
// and a SIGTERM in that window must drain them, not kill the process mid-call. Before that, while it
// waits for the tool-host's catalogue, it holds nothing: the signal ends the wait, and the process.
let runner: Promise<Runner> | undefined;
let stopping = false;
const starting = new AbortController();
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'draining: no new jobs; finishing the ones it holds');
  starting.abort(new Error(`${signal} while the runner was starting`));
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
      modelIdleMs: env.modelIdleSeconds * 1000,
    },
    lockDurationMs: env.lockDurationMs,
    metricsPort: env.runnerMetricsPort,
    metricsHost: env.host,
    drainMs: env.drainMs,
    deltas: { flushMs: env.deltaFlushMs, retentionSeconds: env.deltaRetentionSeconds },
    log,
    signal: starting.signal,
  });
  await runner;
} catch (e) {
  // Stopped while it waited for the catalogue: stop() ends the process, with 0.
  if (e !== starting.signal.reason) failedToStart(log, 'agent-runner', e);
}
