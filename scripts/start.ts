// `npm start` (DESIGN §10): the whole mesh on one machine — Redis (found or started), the offline demo
// model unless MODEL_BASE_URL is set, tool-host, RUNNERS runners and the gateway — until Ctrl-C.
// Output: human-readable lines on a terminal, JSON lines otherwise or with LOG_FORMAT=json; the
// children are told which through LOG_FORMAT (theirs is a pipe, never a terminal).
import { fileURLToPath } from 'node:url';
import { type LogFormat, logFormat, type ServiceEnv, serviceEnv } from '@agentmesh/shared';
import { type DemoModel, startDemoModel } from '../demo/model/demo-model.js';
import { agentmeshGatewayPid, checkPorts, type WantedPort } from './check-ports.js';
import { ensureRedis, type RedisHandle } from './ensure-redis.js';
import { LEVELS, lineWriter, type MeshOutput } from './mesh-output.js';
import { type ExitStatus, liveServices, type Service, spawnService } from './spawn-service.js';
import { watchLauncher } from './watch-launcher.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GRACE_MS = 15_000;
// A service that exits because Ctrl-C reached the whole process group must not read as a crash.
const SIGNAL_RACE_MS = 300;

const env = process.env;
// The services' own variables are parsed as the services parse them; RUNNERS and
// READY_TIMEOUT_SECONDS are npm start's alone.
const meshEnv = readServiceEnv();
const runners = setting('RUNNERS', 2, 1);
const gatewayPort = listenPort('GATEWAY_PORT', meshEnv.gatewayPort);
const toolHostPort = listenPort('TOOL_HOST_PORT', meshEnv.toolHostPort);
const readyTimeoutMs = setting('READY_TIMEOUT_SECONDS', 180, 1) * 1000;
const runnerMetricsPort = meshEnv.runnerMetricsPort;
const toolHostUrl = meshEnv.toolHostUrl ?? `http://127.0.0.1:${toolHostPort}`;
const host = meshEnv.host === '0.0.0.0' || meshEnv.host === '::' ? '127.0.0.1' : meshEnv.host;
const gatewayUrl = `http://${host.includes(':') ? `[${host}]` : host}:${gatewayPort}`;
const WIDTH = Math.max('tool-host'.length, `runner-${runners}`.length);
const output: MeshOutput = { format: chooseFormat(), width: WIDTH };
const meshLine = lineWriter(output, 'mesh', process.stdout);

let redis: RedisHandle | undefined;
let model: DemoModel | undefined;
let stopping: Promise<void> | undefined;

/** npm start's own words: `mesh | …` lines, or one JSON line (level, message, fields). */
const say = (text: string, level: number = LEVELS.info, fields?: Record<string, unknown>) => {
  if (output.format === 'json') return meshLine(text, level, fields);
  for (const line of text.split('\n')) meshLine(line);
};

/** Stops the services (they drain against Redis), then the private Redis and the demo model, then exits. */
function shutdown(code: number, reason: string): Promise<void> {
  stopping ??= (async () => {
    say(reason, code === 0 ? LEVELS.info : LEVELS.error);
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
  model = await startDemoModel({ port: 0, host: '127.0.0.1' });
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
  LOG_FORMAT: output.format,
  // pino-pretty colours only on a terminal, and the children's is a pipe: ours decides.
  ...(output.format === 'pretty' && process.stdout.isTTY && !('NO_COLOR' in env) ? { FORCE_COLOR: '1' } : {}),
};
const start = (name: string, main: string): Service => {
  // Compiled JavaScript run by node (`npm run build` ran first): no TypeScript loader in a service.
  const service = spawnService(name, process.execPath, ['--conditions=agentmesh-dist', main], {
    env: childEnv,
    cwd: ROOT,
    output,
  });
  void service.exited.then((status) => {
    if (stopping) return;
    setTimeout(() => {
      if (!stopping) void shutdown(1, `${name} exited unexpectedly (${describe(status)}); stopping the mesh`);
    }, SIGNAL_RACE_MS);
  });
  return service;
};
start('tool-host', 'services/tool-host/dist/main.js');
for (let i = 1; i <= runners; i++) start(`runner-${i}`, 'services/agent-runner/dist/main.js');
const gateway = start('gateway', 'services/gateway/dist/main.js');

say(`waiting for ${gatewayUrl}/readyz ...`);
if (await waitForOwnGateway(gateway, readyTimeoutMs)) {
  const auth = meshEnv.apiKeys ? ` \\\n  -H 'authorization: Bearer <one of MESH_API_KEYS>'` : '';
  const prompt =
    'How does Redis persist data with the append-only file, how do BullMQ flows make a parent job wait for its children, and what is 2 * (16 + 4)?';
  const curl =
    `curl -s -X POST '${gatewayUrl}/agents/planner/invoke?wait=60' \\\n  -H 'content-type: application/json'${auth} \\\n` +
    `  -d '${JSON.stringify({ prompt })}'`;
  const summary = `ready: ${runners} runner(s), tool-host at ${toolHostUrl}, Redis at ${redis!.url}`;
  if (output.format === 'json') {
    say(summary, LEVELS.info, { docs: `${gatewayUrl}/docs`, curl });
  } else {
    say(summary);
    process.stdout.write(
      `\n  API docs (Swagger UI): ${gatewayUrl}/docs\n\n  Try the planner:\n\n${curl}\n\n  Ctrl-C stops everything.\n\n`,
    );
  }
} else if (!stopping) {
  await shutdown(1, `the gateway was not ready within ${readyTimeoutMs / 1000} s; stopping the mesh`);
}

/**
 * True once OUR gateway is ready: /healthz answers with its pid (not another mesh's gateway that
 * took the port meanwhile), then /readyz with 200. False if it exits or the time runs out.
 */
async function waitForOwnGateway(service: Service, timeoutMs: number): Promise<boolean> {
  let ours = false;
  for (const end = Date.now() + timeoutMs; Date.now() < end && !stopping && service.running; ) {
    ours ||= (await agentmeshGatewayPid(gatewayPort, host)) === service.child.pid;
    if (ours) {
      try {
        const res = await fetch(`${gatewayUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.body?.cancel();
        if (res.status === 200) return true;
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** The ports npm start's services will listen on; the demo model's and a private Redis's are the OS's pick. */
function wantedPorts(): WantedPort[] {
  const ports = [
    { variable: 'GATEWAY_PORT', port: gatewayPort },
    { variable: 'TOOL_HOST_PORT', port: toolHostPort },
  ];
  if (runnerMetricsPort === 0) return ports;
  if (runners > 1) {
    say(
      `RUNNER_METRICS_PORT=${runnerMetricsPort} with RUNNERS=${runners}: every runner would listen on it; set RUNNERS=1 or leave RUNNER_METRICS_PORT unset`,
      LEVELS.error,
    );
    process.exit(1);
  }
  return [...ports, { variable: 'RUNNER_METRICS_PORT', port: runnerMetricsPort }];
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
