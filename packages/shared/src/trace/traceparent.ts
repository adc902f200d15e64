import {
  type Context,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import { tracingOn } from './mesh-tracer.js';

// version 00 as W3C Trace Context defines it; later versions may append fields after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;

/** The span context a W3C `traceparent` names, or undefined when it is malformed or all zeros. */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  if (value === undefined || value.length > 512) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] === '-')) return undefined;
  const sc: SpanContext = {
    traceId: m[2]!,
    spanId: m[3]!,
    traceFlags: Number.parseInt(m[4]!, 16),
    isRemote: true,
  };
  return isSpanContextValid(sc) ? sc : undefined;
}

/** The W3C `traceparent` of a span context. */
export function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A context whose parent span is the one `traceparent` names (the root context when it names none). */
export function contextOf(traceparent: string | undefined): Context {
  const sc = parseTraceparent(traceparent);
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/**
 * The trace headers of an outgoing request made in the active span (the configured propagators,
 * W3C `traceparent` by default). With tracing off, `fallback` — the traceparent the work arrived
 * with — travels on unchanged, so a caller's trace still reaches tools and models.
 */
export function traceHeaders(fallback?: string): Record<string, string> {
  if (tracingOn()) {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    if (carrier.traceparent) return carrier;
  }
  return fallback ? { traceparent: fallback } : {};
}
