import { traceLogFields } from '../trace/trace-log-fields.js';

/** The part of a pino logger a log-method hook sees (`this`). */
interface HookedLogger {
  debug(...args: unknown[]): void;
  bindings(): Record<string, unknown>;
}

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
        if (lvl === INFO && this.bindings().reqId !== undefined) return this.debug(...args);
        return method.apply(this, args);
      },
    },
    mixin: traceLogFields,
  };
}
