import { isSpanContextValid, trace } from '@opentelemetry/api';
import { tracingOn } from './mesh-tracer.js';

/** `trace_id` and `span_id` of the active span, for every log line written inside it (a pino mixin). */
export function traceLogFields(): Record<string, string> {
  if (!tracingOn()) return {};
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
