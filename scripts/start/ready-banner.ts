/**
 * What npm start says once the gateway is ready: the mesh's summary, the runners' metrics URLs when
 * they serve them, the API docs and a curl that invokes an agent of the config; in JSON, one line
 * with those as fields.
 */
import type { CheckedConfig } from '../checked-config.js';
import { exampleInvoke } from '../example-invoke.js';
import { LEVELS } from '../mesh-output.js';
import type { Say } from './say.js';
import type { StartSettings } from './settings.js';
import type { Slot } from './slots.js';

export function sayReady(
  settings: StartSettings,
  config: CheckedConfig,
  redisUrl: string,
  runnerSlots: Slot[],
  say: Say,
): void {
  const { meshEnv, gatewayUrl, urlOf } = settings;
  const auth = meshEnv.apiKeys ? ` \\\n  -H 'authorization: Bearer <one of MESH_API_KEYS>'` : '';
  const example = exampleInvoke(config);
  const curl = example
    ? `curl -s -X POST '${gatewayUrl}/agents/${example.agent}/invoke?wait=60' \\\n  -H 'content-type: application/json'${auth} \\\n` +
      `  -d '${JSON.stringify(example.body).replaceAll("'", "'\\''")}'`
    : '';
  const summary = `ready: ${settings.runners} runner(s), tool-host at ${settings.toolHostUrl}, Redis at ${redisUrl}`;
  const metrics = runnerSlots.map((s) => `${s.name} ${urlOf(Number(s.env.RUNNER_METRICS_PORT))}/metrics`);
  if (settings.output.format === 'json') {
    say(summary, LEVELS.info, {
      docs: `${gatewayUrl}/docs`,
      ...(curl ? { curl } : {}),
      ...(meshEnv.runnerMetricsPort ? { runnerMetrics: metrics } : {}),
    });
  } else {
    say(summary);
    if (meshEnv.runnerMetricsPort) say(`runner metrics: ${metrics.join(', ')}`);
    const tryIt = example ? `  Try ${example.agent}:\n\n${curl}\n\n` : '';
    process.stdout.write(
      `\n  API docs (Swagger UI): ${gatewayUrl}/docs\n\n${tryIt}  Ctrl-C stops everything.\n\n`,
    );
  }
}
