import {
  ERROR_TYPE,
  GEN_AI_AGENT_NAME,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  type InvocationEnd,
  invocationContext,
  type JobData,
  type ModelConfig,
  type ModelReply,
  otel,
  recordInvocationSpan,
  runInSpan,
  type ToolContext,
  traceHeaders,
  tracingOn,
} from '@agentmesh/shared';
import { WaitingChildrenError } from 'bullmq';

/** How a call ended, as a span records it (a ToolOutcome). */
type Settled = { ok: true } | { ok: false; error: { code: string; message: string } };

// The job data of the activation running in this async context, for recordInvocationEnd.
const ACTIVATION_JOB = otel.createContextKey('agentmesh activation job');

/**
 * Runs one activation inside its `activation <agent>` span, a child of the invocation's
 * `invoke_agent` span (every activation of the invocation, the first and each resumption after
 * parking, hangs under that same span). Parking is not an error. With tracing off: `run()`.
 */
export function traceActivation<T>(data: JobData, runner: string, run: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return run();
  const parent = invocationContext(data.traceparent, data.invocationId).setValue(ACTIVATION_JOB, data);
  return runInSpan(
    `activation ${data.agent}`,
    {
      kind: otel.SpanKind.INTERNAL,
      attributes: {
        [GEN_AI_AGENT_NAME]: data.agent,
        'agentmesh.invocation.id': data.invocationId,
        'agentmesh.root.id': data.rootId,
        'agentmesh.runner': runner,
      },
    },
    parent,
    () => run(),
    (e) => !(e instanceof WaitingChildrenError),
  );
}

/**
 * Writes `line` in the trace context of an invocation's `invoke_agent` span, from its job data: for
 * the lines a runner writes about an invocation outside its activations (the watchdog's), so that
 * they carry the trace's ids too (docs/reference/traces.md). With tracing off, or without a traceparent, as it is.
 */
export function inInvocationTrace(
  data: { traceparent?: string | undefined; invocationId: string },
  line: () => void,
): void {
  if (tracingOn()) otel.context.with(invocationContext(data.traceparent, data.invocationId), line);
  else line();
}

/** Records the invocation's `invoke_agent` span; called once, by the activation that ended it. */
export function recordInvocationEnd(end: InvocationEnd): void {
  if (!tracingOn()) return;
  const data = otel.context.active().getValue(ACTIVATION_JOB) as JobData | undefined;
  if (data?.invocationId === end.id) recordInvocationSpan(data.traceparent, end);
}

/**
 * One model call in its `chat <model id>` span (GenAI semantic conventions: operation, provider,
 * request model, input and output tokens), retries included; `send` gets the trace headers for
 * the request. `fallback` is the invocation's traceparent, sent unchanged while tracing is off.
 */
export function traceChat(
  model: ModelConfig,
  fallback: string | undefined,
  send: (headers: Record<string, string>) => Promise<ModelReply>,
): Promise<ModelReply> {
  if (!tracingOn()) return send(traceHeaders(fallback));
  return runInSpan(
    `chat ${model.model}`,
    {
      kind: otel.SpanKind.CLIENT,
      attributes: {
        [GEN_AI_OPERATION_NAME]: 'chat',
        [GEN_AI_PROVIDER_NAME]: model.provider,
        [GEN_AI_REQUEST_MODEL]: model.model,
        ...serverOf(model.baseUrl),
      },
    },
    otel.context.active(),
    async (span) => {
      try {
        const reply = await send(traceHeaders());
        span.setAttributes({
          [GEN_AI_USAGE_INPUT_TOKENS]: reply.usage.promptTokens,
          [GEN_AI_USAGE_OUTPUT_TOKENS]: reply.usage.completionTokens,
        });
        return reply;
      } catch (e) {
        span.setAttribute(ERROR_TYPE, codeOf(e));
        throw e;
      }
    },
  );
}

/**
 * One tool call in the runner's `execute_tool <name>` span; `send` gets the trace headers for the
 * tool-host, whose own `execute_tool` span hangs under this one.
 */
export function traceToolCall<T extends Settled>(
  name: string,
  toolContext: ToolContext,
  fallback: string | undefined,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return send(traceHeaders(fallback));
  return runInSpan(
    `execute_tool ${name}`,
    {
      kind: otel.SpanKind.CLIENT,
      attributes: {
        [GEN_AI_OPERATION_NAME]: 'execute_tool',
        [GEN_AI_TOOL_NAME]: name,
        [GEN_AI_TOOL_CALL_ID]: toolContext.callId,
      },
    },
    otel.context.active(),
    async (span) => {
      const outcome = await send(traceHeaders());
      if (!outcome.ok) {
        span.setAttribute(ERROR_TYPE, outcome.error.code);
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: outcome.error.message });
      }
      return outcome;
    },
  );
}

function serverOf(baseUrl: string): Record<string, string | number> {
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { 'server.address': url.hostname, 'server.port': port };
  } catch {
    return {};
  }
}

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'error';
}
