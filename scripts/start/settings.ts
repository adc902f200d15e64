/**
 * npm start's settings, read once before anything starts: the services' own variables parsed as the
 * services parse them, its own RUNNERS and READY_TIMEOUT_SECONDS, the ports and URLs it prints, and
 * how it writes (LOG_FORMAT). A bad value is said on stderr and stops npm start (exit code 1).
 */
import { type LogFormat, logFormat, type ServiceEnv, serviceEnv } from '@agentmesh/shared/settings';
import type { MeshOutput } from '../mesh-output.js';

export interface StartSettings {
  /** The environment as every service will read it. */
  meshEnv: ServiceEnv;
  /** `npm run dev` (`--dev`). */
  dev: boolean;
  runners: number;
  gatewayPort: number;
  toolHostPort: number;
  readyTimeoutMs: number;
  toolHostUrl: string;
  /** The host the printed URLs name: loopback when the services listen on every interface. */
  host: string;
  /** The URL of a port of `host`. */
  urlOf(port: number): string;
  gatewayUrl: string;
  output: MeshOutput;
}

/** Reads the settings from `env` and `argv`, in this order; the first bad value exits. */
export function readSettings(env: NodeJS.ProcessEnv, argv: string[]): StartSettings {
  const dev = argv.includes('--dev');
  // The services' own variables are parsed as the services parse them; RUNNERS and
  // READY_TIMEOUT_SECONDS are npm start's alone.
  const meshEnv = readServiceEnv(env);
  const runners = setting(env, 'RUNNERS', 2, 1);
  const gatewayPort = listenPort('GATEWAY_PORT', meshEnv.gatewayPort);
  const toolHostPort = listenPort('TOOL_HOST_PORT', meshEnv.toolHostPort);
  const readyTimeoutMs = setting(env, 'READY_TIMEOUT_SECONDS', 180, 1) * 1000;
  const toolHostUrl = meshEnv.toolHostUrl ?? `http://127.0.0.1:${toolHostPort}`;
  const host = meshEnv.host === '0.0.0.0' || meshEnv.host === '::' ? '127.0.0.1' : meshEnv.host;
  const urlOf = (port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const width = Math.max('tool-host'.length, `runner-${runners}`.length);
  return {
    meshEnv,
    dev,
    runners,
    gatewayPort,
    toolHostPort,
    readyTimeoutMs,
    toolHostUrl,
    host,
    urlOf,
    gatewayUrl: urlOf(gatewayPort),
    output: { format: chooseFormat(env), width },
  };
}

function chooseFormat(env: NodeJS.ProcessEnv): LogFormat {
  try {
    return logFormat(env.LOG_FORMAT, process.stdout.isTTY === true);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}

/** The environment as every service will read it; a bad value stops npm start before anything starts. */
function readServiceEnv(env: NodeJS.ProcessEnv): ServiceEnv {
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

function setting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= min) return n;
  process.stderr.write(`${name} must be an integer ≥ ${min}, got "${raw}"\n`);
  process.exit(1);
}
