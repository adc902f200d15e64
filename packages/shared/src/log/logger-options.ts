import { pino } from 'pino';
import { traceLogFields } from '../trace/trace-log-fields.js';

/** The part of a pino logger a log-method hook sees (`this`). */
interface HookedLogger {
  debug(...args: unknown[]): void;
  /** Its bindings as pino keeps them, serialized: `,"pid":…,"reqId":"req-1"` for a request's. */
  [pino.symbols.chindingsSym]?: string;
}

/**
 * Whether a logger is a request's (bound to fastify's `reqId`), read from its serialized bindings:
 * `bindings()` parses them anew on every call, and this runs for every line.
 */
const isRequestLogger = (logger: HookedLogger) =>
  logger[pino.symbols.chindingsSym]?.includes(',"reqId":') === true;

/** Options for a service's pino logger (pass them to `pino()`; the caller picks the destination). */
export interface ServiceLoggerOptions {
  level: string;
  base: { service: string };
  hooks: {
    logMethod(this: HookedLogger, args: unknown[], method: (...args: unknown[]) => void, level: number): void;
  };
  /** `trace_id` and `span_id` of the active span on every line written inside one. */
  mixin(): Record<string, string>;
}

const INFO = 30;

/**
 * pino options for `service`: its name on every line, and per-request lines at debug. fastify logs
 * each request at info through a child logger bound to its `reqId` ("incoming request", "request
 * completed", 4xx errors, closed streams); those move to debug, warnings and errors stay.
 */
export function loggerOptions(service: string, level: string): ServiceLoggerOptions {
  return {
    level,
    base: { service },
    hooks: {
      logMethod(args, method, lvl) {
        if (lvl === INFO && isRequestLogger(this)) return this.debug(...args);
        return method.apply(this, args);
      },
    },
    mixin: traceLogFields,
  };
}
