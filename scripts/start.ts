// `npm start` (docs/guides/getting-started.md): the whole mesh on one machine — Redis (found or started), the offline demo
// model unless MODEL_BASE_URL is set, tool-host, RUNNERS runners and the gateway — until Ctrl-C.
// `npm run dev` (`--dev`) is the same mesh, then watches the config and the files its parts import
// and restarts what a change affects (dev-loop.ts).
// Output: human-readable lines on a terminal, JSON lines otherwise or with LOG_FORMAT=json; the
// children are told which through LOG_FORMAT (theirs is a pipe, never a terminal).
// Its parts are in start/: settings, words, stopping, the services' slots, the gateway's readiness
// and the ready banner.
import { fileURLToPath } from 'node:url';
import { startDemoModel } from '../demo/model/demo-model.js';
import { approvalNotice, approvalRequestOf } from './approval-notice.js';
import { buildConsoleIfStale, buildIfStale } from './build-if-stale.js';
import { checkConfigApart } from './check-config-apart.js';
import { checkPorts, type WantedPort } from './check-ports.js';
import { startDevLoop } from './dev-loop.js';
import { ensureRedis } from './ensure-redis.js';
import { listenOutside } from './free-port.js';
import { LEVELS } from './mesh-output.js';
import { runnerMetricsPorts } from './runner-metrics-ports.js';
import type { Service } from './spawn-service.js';
import { MeshLifecycle } from './start/lifecycle.js';
import { sayReady } from './start/ready-banner.js';
import { meshVoice } from './start/say.js';
import { readSettings } from './start/settings.js';
import { meshSlots, SlotRunner } from './start/slots.js';
import { waitForOwnGateway } from './start/wait-for-gateway.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// `npm run dev` restarts runners on every change: what they hold is requeued within this (ms).
const DEV_DRAIN_MS = '2000';

const env = process.env;
const settings = readSettings(env, process.argv);
const { meshEnv, dev, runners, gatewayPort, toolHostPort, readyTimeoutMs, toolHostUrl, output } = settings;
const { say, sayProblems } = meshVoice(output);
const lifecycle = new MeshLifecycle(say);
const shutdown = (code: number, reason: string) => lifecycle.shutdown(code, reason);
lifecycle.handleExits();

// Every port is checked before anything starts: a taken one would otherwise fail a service midway.
const problems = await checkPorts(wantedPorts(), meshEnv.host);
if (problems.length > 0) {
  for (const problem of problems) say(problem, LEVELS.error);
  say(
    'nothing was started: stop what holds the port, or pick free ones (GATEWAY_PORT=… TOOL_HOST_PORT=… npm start)',
    LEVELS.error,
  );
  process.exit(1);
}
const metricsPorts = await runnerMetricsPorts(meshEnv.runnerMetricsPort, runners, meshEnv.host).catch(
  (e: Error) => {
    say(`${e.message}; nothing was started`, LEVELS.error);
    process.exit(1);
  },
);

// The config once, as the services will read it, before anything starts (docs/reference/configuration.md): each problem
// once, instead of every service failing on it after Redis and the model were started.
let config = await checkConfigApart(env, ROOT);
if (config.problems.length > 0) {
  sayProblems(
    `the config (${config.roots.config}) has ${count(config.problems.length, 'problem')}:`,
    config.problems,
  );
  say('nothing was started: fix the config (MESH_CONFIG names it) and start again', LEVELS.error);
  process.exit(1);
}

const onPid = (pid: number | undefined) => {
  lifecycle.buildPid = pid;
};
// The services, then the console the gateway serves at /ui.
const built =
  (await buildIfStale({ say, onPid })) || (lifecycle.stopping ? 0 : await buildConsoleIfStale({ onPid }));
if (lifecycle.stopping) await lifecycle.stopping;
if (built !== 0) {
  say(`the build failed (exit code ${built}); nothing was started`, LEVELS.error);
  process.exit(1);
}

try {
  // A cluster (REDIS_CLUSTER_NODES, which the services read themselves) is never started here.
  lifecycle.redis = meshEnv.redisClusterNodes
    ? { url: meshEnv.redisUrl, stop: async () => undefined }
    : await ensureRedis(meshEnv.redisUrl, say, output, reservedPorts());
  if (meshEnv.redisClusterNodes)
    say(`Redis Cluster: ${meshEnv.redisClusterNodes.length} seed node(s) from REDIS_CLUSTER_NODES`);
} catch (e) {
  say((e as Error).message, LEVELS.error);
  await shutdown(1, 'cannot run the mesh without Redis');
}
if (lifecycle.stopping) await lifecycle.stopping; // a signal came while Redis was being found, installed or started
const redis = lifecycle.redis!;
if (!env.MODEL_BASE_URL) {
  // Word by word, a few ms apart: the answers stream in as a real model's would (docs/guides/streaming.md).
  const model = await listenOutside(
    reservedPorts(),
    () => startDemoModel({ port: 0, host: '127.0.0.1', chunkDelayMs: 5 }),
    (model) => model.close(),
  );
  lifecycle.model = model;
  say(`MODEL_BASE_URL is not set: answers come from the OFFLINE DEMO MODEL at ${model.url}`);
  say(
    '  (a scripted stand-in, not a language model; set MODEL_BASE_URL and OPENAI_API_KEY to use a real one)',
  );
} else {
  say(`model: ${env.MODEL_BASE_URL} (${env.MODEL || 'gpt-4o-mini'})`);
}

const childEnv: NodeJS.ProcessEnv = {
  ...env,
  REDIS_URL: redis.url,
  GATEWAY_PORT: String(gatewayPort),
  TOOL_HOST_PORT: String(toolHostPort),
  TOOL_HOST_URL: toolHostUrl,
  ...(lifecycle.model ? { MODEL_BASE_URL: lifecycle.model.url } : {}),
  ...(dev && !env.RUNNER_DRAIN_MS ? { RUNNER_DRAIN_MS: DEV_DRAIN_MS } : {}),
  LOG_FORMAT: output.format,
  // pino-pretty colours only on a terminal, and the children's is a pipe: ours decides.
  ...(output.format === 'pretty' && process.stdout.isTTY && !('NO_COLOR' in env) ? { FORCE_COLOR: '1' } : {}),
};

const slots = meshSlots(childEnv, metricsPorts, tellApprovals);
const runner = new SlotRunner({ root: ROOT, output, dev, say, lifecycle });

runner.start(slots.toolHost);
for (const slot of slots.runners) runner.start(slot);
runner.start(slots.gateway);

say(`waiting for ${settings.gatewayUrl}/readyz ...`);
const ready = await gatewayReady(slots.gateway.service!);
if (ready === 'ready') {
  sayReady(settings, config, redis.url, slots.runners, say);
} else if (ready === 'timeout' && !lifecycle.stopping) {
  await shutdown(1, `the gateway was not ready within ${readyTimeoutMs / 1000} s; stopping the mesh`);
}
// 'exited': the gateway's exit (or the service that took it down) is reported by start().

if (dev && !lifecycle.stopping) {
  startDevLoop({
    config,
    check: () => checkConfigApart(env, ROOT),
    say,
    sayProblems,
    running: () => ({
      'tool-host': slots.toolHost.service?.running === true,
      runners: slots.runners.every((s) => s.service?.running === true),
      gateway: slots.gateway.service?.running === true,
    }),
    restart: async (parts) => {
      const { toolHost, gateway } = slots;
      const stops = [
        ...(parts.includes('runners') ? slots.runners : []),
        ...(parts.includes('gateway') ? [gateway] : []),
      ].map((slot) => runner.stop(slot));
      await Promise.all(stops);
      // Runners read the catalogue once: the new tool-host's must be there before they start.
      if (parts.includes('tool-host')) {
        await runner.stop(toolHost);
        if (lifecycle.stopping || !(await runner.startToolHost(toolHost))) return false;
      }
      if (lifecycle.stopping) return false; // Ctrl-C meanwhile: nothing more is started
      if (parts.includes('runners')) for (const slot of slots.runners) runner.start(slot);
      if (parts.includes('gateway')) runner.start(gateway);
      return (await gatewayReady(gateway.service!)) === 'ready';
    },
    onChecked: (next) => {
      config = next;
    },
  });
  say('watching the config and the files it loads: a change restarts what it affects (Ctrl-C stops)');
}

/** Our gateway's readiness (start/wait-for-gateway.ts), within READY_TIMEOUT_SECONDS. */
function gatewayReady(service: Service): Promise<'ready' | 'exited' | 'timeout'> {
  const address = { port: gatewayPort, host: settings.host, url: settings.gatewayUrl };
  return waitForOwnGateway(service, readyTimeoutMs, address, () => lifecycle.stopping !== undefined);
}

/** A runner's `approval requested` line becomes the curls that decide it (docs/guides/approvals-and-budgets.md). */
function tellApprovals(line: string): void {
  const request = approvalRequestOf(line);
  if (request) say(approvalNotice(request, settings.gatewayUrl, meshEnv.apiKeys !== undefined));
}

/** The ports npm start's services will listen on; the demo model's and a private Redis's are the OS's pick outside them. */
function wantedPorts(): WantedPort[] {
  return [
    { variable: 'GATEWAY_PORT', port: gatewayPort },
    { variable: 'TOOL_HOST_PORT', port: toolHostPort },
  ];
}

/** The ports the services will listen on, which the demo model and a private Redis must not take first. */
function reservedPorts(): number[] {
  return [gatewayPort, toolHostPort, ...metricsPorts].filter((port) => port !== 0);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
