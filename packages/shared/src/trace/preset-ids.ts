import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

// The ids the next span started inside withPresetIds takes. Tracer.startSpan asks its id generator
// synchronously, once per span, so a slot set around that one call reaches exactly that span.
let preset: { traceId: string; spanId: string } | undefined;

/**
 * Runs `start` (which must start exactly one span, synchronously) so that the span gets these ids:
 * an `invoke_agent` span's context is handed out when the invocation is created, and the span
 * itself is recorded with that context when the invocation finishes, maybe in another process.
 */
export function withPresetIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
  preset = ids;
  try {
    return start();
  } finally {
    preset = undefined;
  }
}

/** An id generator that honours withPresetIds and asks `random` otherwise. */
export function presetIdGenerator(random: IdGenerator): IdGenerator {
  return {
    generateTraceId: () => preset?.traceId ?? random.generateTraceId(),
    generateSpanId: () => preset?.spanId ?? random.generateSpanId(),
  };
}
