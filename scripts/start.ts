// `npm start` (docs/guides/getting-started.md): the whole mesh on one machine — Redis (found or started), the offline demo
// model unless MODEL_BASE_URL is set, tool-host, RUNNERS runners and the gateway — until Ctrl-C.
// `npm run dev` (`--dev`) is the same mesh, then watches the config and the files its parts import
// and restarts what a change affects (dev-loop.ts).
// Output: human-readable lines on a terminal, JSON lines otherwise or with LOG_FORMAT=json; the
// children are told which through LOG_FORMAT (theirs is a pipe, never a terminal).
import { fileURLToPath } from 'node:url';
import { type LogFormat, logFormat, type ServiceEnv, serviceEnv } from '@agentmesh/shared';
import { type DemoModel, startDemoModel } from '../demo/model/demo-model.js';
import { approvalNotice, approvalRequestOf } from './approval-notice.js';
import { buildConsoleIfStale, buildIfStale } from './build-if-stale.js';
import { checkConfigApart } from './check-config-apart.js';
import { agentmeshGatewayPid, checkPorts, type WantedPort } from './check-ports.js';
import { startDevLoop } from './dev-loop.js';
import { ensureRedis, type RedisHandle } from './ensure-redis.js';
import { exampleInvoke } from './example-invoke.js';
import { LEVELS, lineWriter, type MeshOutput } from './mesh-output.js';
import { runnerMetricsPorts } from './runner-metrics-ports.js';
import { type ExitStatus, liveServices, type Service, spawnService } from './spawn-service.js';
import { watchLauncher } from './watch-launcher.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GRACE_MS = 15_000;
// A service that exits because Ctrl-C reached the whole process group must not read as a crash.
const SIGNAL_RACE_MS = 300;
// `npm run dev` restarts runners on every change: what they hold is requeued within this (ms).
const DEV_DRAIN_MS = '2000';

const env = process.env;
const dev = process.argv.includes('--dev');
// The services' own variables are parsed as the services parse them; RUNNERS and
// READY_TIMEOUT_SECONDS are npm start's alone.
const meshEnv = readServiceEnv();
const runners = setting('RUNNERS', 2, 1);
const gatewayPort = listenPort('GATEWAY_PORT', meshEnv.gatewayPort);
const toolHostPort = listenPort('TOOL_HOST_PORT', meshEnv.toolHostPort);
const readyTimeoutMs = setting('READY_TIMEOUT_SECONDS', 180, 1) * 1000;
const toolHostUrl = meshEnv.toolHostUrl ?? `http://127.0.0.1:${toolHostPort}`;
const host = meshEnv.host === '0.0.0.0' || meshEnv.host === '::' ? '127.0.0.1' : meshEnv.host;
const urlOf = (port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
const gatewayUrl = urlOf(gatewayPort);
const WIDTH = Math.max('tool-host'.length, `runner-${runners}`.length);
const output: MeshOutput = { format: chooseFormat(), width: WIDTH };
const meshLine = lineWriter(output, 'mesh', process.stdout);

let redis: RedisHandle | undefined;
let model: DemoModel | undefined;
let stopping: Promise<void> | undefined;
let buildPid: number | undefined;

/** npm start's own words: `mesh | …` lines, or one JSON line (level, message, fields). */
const say = (text: string, level: number = LEVELS.info, fields?: Record<string, unknown>) => {
  if (output.format === 'json') return meshLine(text, level, fields);
  for (const line of text.split('\n')) meshLine(line);
};

/** A heading and one line per problem; in JSON, one line with the problems as a field. */
const sayProblems = (heading: string, problems: string[]) => {
  if (output.format === 'json') return say(heading.replace(/:$/, ''), LEVELS.error, { problems });
  say(heading, LEVELS.error);
  for (const problem of problems) say(`  ${problem}`, LEVELS.error);
};

/** Stops the services (they drain against Redis), then the private Redis and the demo model, then exits. */
function shutdown(code: number, reason: string): Promise<void> {
  stopping ??= (async () => {
    say(reason, code === 0 ? LEVELS.info : LEVELS.error);
    signalBuild('SIGTERM');
    const services = [...liveServices].filter((s) => s !== redis?.service);
    await Promise.all(services.map((s) => s.stop(GRACE_MS)));
    await redis?.stop();
    await Promise.all([...liveServices].map((s) => s.stop(GRACE_MS)));
    await model?.close();
    say(code === 0 ? 'stopped' : 'stopped after a failure');
    process.exit(code);
  })();
  return stopping;
}

// Ctrl-C reaches this script twice at once: from the terminal and relayed by npm. Only a signal
// that comes a while after the first one means "stop now".
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (!stopping) {
      firstSignalAt = Date.now();
      return void shutdown(0, `${signal}: stopping every service (again to kill them at once)`);
    }
    if (Date.now() - firstSignalAt < 1000) return;
    say(`${signal} again: killing every service now`);
    for (const s of liveServices) s.signal('SIGKILL');
  });
}
// `kill <npm pid>` reaches npm's shell but not this script (see watchLauncher): act on it all the same.
watchLauncher(
  (pid) =>
    void shutdown(0, `the process that launched npm start (pid ${pid}) is gone: stopping every service`),
);
// Last resort (an exception in this script): no child outlives it.
process.on('exit', () => {
  signalBuild('SIGKILL');
  for (const s of liveServices) s.signal('SIGKILL');
});
process.on('uncaughtException', (e) => void shutdown(1, `npm start failed: ${e.stack ?? e.message}`));

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
  buildPid = pid;
};
// The services, then the console the gateway serves at /ui.
const built = (await buildIfStale({ say, onPid })) || (stopping ? 0 : await buildConsoleIfStale({ onPid }));
if (stopping) await stopping;
if (built !== 0) {
  say(`the build failed (exit code ${built}); nothing was started`, LEVELS.error);
  process.exit(1);
}

try {
  // A cluster (REDIS_CLUSTER_NODES, which the services read themselves) is never started here.
  redis = meshEnv.redisClusterNodes
    ? { url: meshEnv.redisUrl, stop: async () => undefined }
    : await ensureRedis(meshEnv.redisUrl, say, output);
  if (meshEnv.redisClusterNodes)
    say(`Redis Cluster: ${meshEnv.redisClusterNodes.length} seed node(s) from REDIS_CLUSTER_NODES`);
} catch (e) {
  say((e as Error).message, LEVELS.error);
  await shutdown(1, 'cannot run the mesh without Redis');
}
if (stopping) await stopping; // a signal came while Redis was being found, installed or started
if (!env.MODEL_BASE_URL) {
  // Word by word, a few ms apart: the answers stream in as a real model's would (docs/guides/streaming.md).
  model = await startDemoModel({ port: 0, host: '127.0.0.1', chunkDelayMs: 5 });
  say(`MODEL_BASE_URL is not set: answers come from the OFFLINE DEMO MODEL at ${model.url}`);
  say(
    '  (a scripted stand-in, not a language model; set MODEL_BASE_URL and OPENAI_API_KEY to use a real one)',
  );
} else {
  say(`model: ${env.MODEL_BASE_URL} (${env.MODEL || 'gpt-4o-mini'})`);
}

const childEnv: NodeJS.ProcessEnv = {
  ...env,
  REDIS_URL: redis!.url,
  GATEWAY_PORT: String(gatewayPort),
  TOOL_HOST_PORT: String(toolHostPort),
  TOOL_HOST_URL: toolHostUrl,
  ...(model ? { MODEL_BASE_URL: model.url } : {}),
  ...(dev && !env.RUNNER_DRAIN_MS ? { RUNNER_DRAIN_MS: DEV_DRAIN_MS } : {}),
  LOG_FORMAT: output.format,
  // pino-pretty colours only on a terminal, and the children's is a pipe: ours decides.
  ...(output.format === 'pretty' && process.stdout.isTTY && !('NO_COLOR' in env) ? { FORCE_COLOR: '1' } : {}),
};

/** One service of the mesh as npm start runs it; `npm run dev` replaces `service` on a restart. */
interface Slot {
  name: string;
  main: string;
  env: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
  service?: Service;
}

const slots = {
  toolHost: { name: 'tool-host', main: 'services/tool-host/dist/main.js', env: childEnv } as Slot,
  runners: metricsPorts.map(
    (port, i): Slot => ({
      name: `runner-${i + 1}`,
      main: 'services/agent-runner/dist/main.js',
      env: { ...childEnv, RUNNER_METRICS_PORT: String(port) },
      onLine: tellApprovals,
    }),
  ),
  gateway: { name: 'gateway', main: 'services/gateway/dist/main.js', env: childEnv } as Slot,
};

/** Starts a slot's service; an exit nobody asked for stops the mesh (`npm run dev`: says so, and waits). */
function start(slot: Slot): Service {
  // Compiled JavaScript run by node (the build ran first): no TypeScript loader in a service.
  const service = spawnService(slot.name, process.execPath, ['--conditions=agentmesh-dist', slot.main], {
    env: slot.env,
    cwd: ROOT,
    output,
    onLine: (line) => slot.onLine?.(line),
  });
  slot.service = service;
  void service.exited.then((status) => {
    setTimeout(() => {
      if (stopping || slot.service !== service) return; // stopping, or replaced by a restart
      if (dev)
        say(`${slot.name} exited (${describe(status)}); it starts again on the next change`, LEVELS.error);
      else void shutdown(1, `${slot.name} exited unexpectedly (${describe(status)}); stopping the mesh`);
    }, SIGNAL_RACE_MS);
  });
  return service;
}

start(slots.toolHost);
for (const slot of slots.runners) start(slot);
start(slots.gateway);

say(`waiting for ${gatewayUrl}/readyz ...`);
const ready = await waitForOwnGateway(slots.gateway.service!, readyTimeoutMs);
if (ready === 'ready') {
  const auth = meshEnv.apiKeys ? ` \\\n  -H 'authorization: Bearer <one of MESH_API_KEYS>'` : '';
  const example = exampleInvoke(config);
  const curl = example
    ? `curl -s -X POST '${gatewayUrl}/agents/${example.agent}/invoke?wait=60' \\\n  -H 'content-type: application/json'${auth} \\\n` +
      `  -d '${JSON.stringify(example.body).replaceAll("'", "'\\''")}'`
    : '';
  const summary = `ready: ${runners} runner(s), tool-host at ${toolHostUrl}, Redis at ${redis!.url}`;
  const metrics = slots.runners.map((s) => `${s.name} ${urlOf(Number(s.env.RUNNER_METRICS_PORT))}/metrics`);
  if (output.format === 'json') {
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
} else if (ready === 'timeout' && !stopping) {
  await shutdown(1, `the gateway was not ready within ${readyTimeoutMs / 1000} s; stopping the mesh`);
}
// 'exited': the gateway's exit (or the service that took it down) is reported by start().

if (dev && !stopping) {
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
      ].map(stop);
      await Promise.all(stops);
      // Runners read the catalogue once: the new tool-host's must be there before they start.
      if (parts.includes('tool-host')) {
        await stop(toolHost);
        if (stopping || !(await startToolHost())) return false;
      }
      if (stopping) return false; // Ctrl-C meanwhile: nothing more is started
      if (parts.includes('runners')) for (const slot of slots.runners) start(slot);
      if (parts.includes('gateway')) start(gateway);
      return (await waitForOwnGateway(gateway.service!, readyTimeoutMs)) === 'ready';
    },
    onChecked: (next) => {
      config = next;
    },
  });
  say('watching the config and the files it loads: a change restarts what it affects (Ctrl-C stops)');
}

/** Stops a slot's service as asked: its exit is no crash (start() ignores a slot's former service). */
async function stop(slot: Slot): Promise<void> {
  const service = slot.service;
  slot.service = undefined;
  await service?.stop(GRACE_MS);
}

/** Starts the tool-host; true once it says it published its catalogue, false if it exits first. */
async function startToolHost(): Promise<boolean> {
  const slot = slots.toolHost;
  let published!: (ok: boolean) => void;
  const outcome = new Promise<boolean>((resolve) => {
    published = resolve;
  });
  slot.onLine = (line) => {
    if (line.includes('catalogue published')) published(true);
  };
  void start(slot).exited.then(() => published(false));
  const ok = await outcome;
  slot.onLine = undefined;
  return ok;
}

/** A runner's `approval requested` line becomes the curls that decide it (docs/guides/approvals-and-budgets.md). */
function tellApprovals(line: string): void {
  const request = approvalRequestOf(line);
  if (request) say(approvalNotice(request, gatewayUrl, meshEnv.apiKeys !== undefined));
}

/**
 * 'ready' once OUR gateway is ready: /healthz answers with its pid (not another mesh's gateway that
 * took the port meanwhile), then /readyz with 200; 'exited' if it exits first, 'timeout' when the
 * time runs out (or the mesh is stopping).
 */
async function waitForOwnGateway(
  service: Service,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  let ours = false;
  for (const end = Date.now() + timeoutMs; Date.now() < end && !stopping; ) {
    if (!service.running) return 'exited';
    ours ||= (await agentmeshGatewayPid(gatewayPort, host)) === service.child.pid;
    if (ours) {
      try {
        const res = await fetch(`${gatewayUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.body?.cancel();
        if (res.status === 200) return 'ready';
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return service.running ? 'timeout' : 'exited';
}

/** The ports npm start's services will listen on; the demo model's and a private Redis's are the OS's pick. */
function wantedPorts(): WantedPort[] {
  return [
    { variable: 'GATEWAY_PORT', port: gatewayPort },
    { variable: 'TOOL_HOST_PORT', port: toolHostPort },
  ];
}

function signalBuild(signal: NodeJS.Signals): void {
  if (buildPid === undefined) return;
  try {
    process.kill(buildPid, signal);
  } catch {
    // gone already
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function chooseFormat(): LogFormat {
  try {
    return logFormat(env.LOG_FORMAT, process.stdout.isTTY === true);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}

function describe(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

/** The environment as every service will read it; a bad value stops npm start before anything starts. */
function readServiceEnv(): ServiceEnv {
  try {
    return serviceEnv(env);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}

/** A port npm start prints URLs for: the OS's pick (0) is refused. */
function listenPort(name: string, port: number): number {
  if (port >= 1) return port;
  process.stderr.write(`${name} must be an integer ≥ 1, got "${port}"\n`);
  process.exit(1);
}

function setting(name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= min) return n;
  process.stderr.write(`${name} must be an integer ≥ ${min}, got "${raw}"\n`);
  process.exit(1);
}
