import { pino } from 'pino';
import { type ServiceEnv, serviceEnv } from '../service-env.js';
import { startTracing, type Tracing } from '../trace/start-tracing.js';
import { logFormat } from './log-format.js';
import { loggerOptions } from './logger-options.js';
import { prettyOptions } from './pretty-options.js';

/** What every service's `main` starts from: its environment, its tracing and its logger. */
export interface ServiceStart {
  env: ServiceEnv;
  tracing: Tracing;
  log: pino.Logger;
}

/**
 * Reads the environment (a bad one is a message on stderr and exit 1, not a stack trace), starts
 * tracing (off, and free, unless an OTEL_* exporter is configured: docs/reference/traces.md) and
 * builds `service`'s logger: JSON lines, or human-readable ones on a terminal (`npm start` says
 * which through LOG_FORMAT). Lines are written as they are logged (docs/reference/traces.md): pino's
 * own default hands each to a helper thread, whose wake-ups cost a runner 6 % of its CPU per run,
 * and a process killed before the thread wrote loses its last lines.
 */
export async function startService(service: string, tracingName: string): Promise<ServiceStart> {
  let env: ServiceEnv;
  try {
    env = serviceEnv(process.env);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
  const tracing = await startTracing(process.env, tracingName);
  const options = loggerOptions(service, env.logLevel);
  const log =
    logFormat(env.logFormat, process.stdout.isTTY === true) === 'pretty'
      ? pino(options, (await import('pino-pretty')).default(prettyOptions()))
      : pino(options, pino.destination({ dest: 1, sync: true }));
  return { env, tracing, log };
}

/** A service that could not start: the reason logged and on stderr, then exit 1. */
export function failedToStart(log: pino.Logger, service: string, e: unknown): never {
  log.fatal({ err: (e as Error).message }, `${service} failed to start`);
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
}
