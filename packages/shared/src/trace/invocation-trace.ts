import { createHash } from 'node:crypto';
import {
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  ERROR_TYPE,
  GEN_AI_AGENT_ID,
  GEN_AI_AGENT_NAME,
  GEN_AI_OPERATION_NAME,
} from './gen-ai-attributes.js';
import { meshTracer, tracingOn } from './mesh-tracer.js';
import { withPresetIds } from './preset-ids.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

// An invocation's `invoke_agent` span cannot stay open across processes and parkings: its id is
// derived from the trace and the invocation id instead, so the gateway, every runner that activates
// the invocation and the one that finishes it all name the same span without storing it. It is
// recorded once, when the invocation ends, from its creation time to then.

/** The span id of invocation `id`'s `invoke_agent` span in trace `traceId`. */
export function invocationSpanId(traceId: string, id: string): string {
  return createHash('sha256').update(`${traceId}/${id}`).digest('hex').slice(0, 16);
}

/**
 * The traceparent a new invocation records as the span that started it: the active span (the
 * gateway's HTTP span, or the activation that delegates), else `incoming` unchanged when it is a
 * well-formed one — with tracing off the caller's traceparent still travels through jobs, tools,
 * models and children, and a malformed header is dropped at the door.
 */
export function callerTraceparent(incoming?: string): string | undefined {
  if (tracingOn()) {
    const sc = trace.getActiveSpan()?.spanContext();
    if (sc && isSpanContextValid(sc)) return formatTraceparent(sc);
  }
  return parseTraceparent(incoming) ? incoming : undefined;
}

/** The context invocation `id`'s work hangs under: its `invoke_agent` span, a child of `caller`. */
export function invocationContext(caller: string | undefined, id: string): Context {
  const sc = parseTraceparent(caller);
  if (!sc) return ROOT_CONTEXT;
  const spanId = invocationSpanId(sc.traceId, id);
  return trace.setSpanContext(ROOT_CONTEXT, { ...sc, spanId, isRemote: true });
}

/** What the `invoke_agent` span records of the invocation that ended. */
export interface InvocationEnd {
  id: string;
  rootId: string;
  agent: string;
  /** When the invocation was created (epoch ms): the span's start. */
  createdAt: number;
  status: string;
  error?: { code: string; message: string } | undefined;
}

/**
 * Records the `invoke_agent <agent>` span of an invocation that just ended, under `caller` (its job
 * data's traceparent) with the derived span id. Nothing happens with tracing off, without a caller,
 * or in a trace not sampled.
 */
export function recordInvocationSpan(caller: string | undefined, end: InvocationEnd): void {
  if (!tracingOn()) return;
  const sc = parseTraceparent(caller);
  if (!sc || (sc.traceFlags & 1) === 0) return;
  const ids = { traceId: sc.traceId, spanId: invocationSpanId(sc.traceId, end.id) };
  const span = withPresetIds(ids, () =>
    meshTracer().startSpan(
      `invoke_agent ${end.agent}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: end.createdAt,
        attributes: {
          [GEN_AI_OPERATION_NAME]: 'invoke_agent',
          [GEN_AI_AGENT_NAME]: end.agent,
          [GEN_AI_AGENT_ID]: end.id,
          'agentmesh.root.id': end.rootId,
          'agentmesh.invocation.status': end.status,
        },
      },
      trace.setSpanContext(ROOT_CONTEXT, sc),
    ),
  );
  if (end.error) {
    span.setAttribute(ERROR_TYPE, end.error.code);
    if (end.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: end.error.message });
  }
  span.end();
}
