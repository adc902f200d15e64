import {
  ERROR_TYPE,
  formatTraceparent,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  otel,
  RequestContexts,
  runInSpan,
  type ToolContext,
  TracedLogController,
  tracingOn,
} from '@agentmesh/shared';
import { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';

/** The tool-host's request trace context: fastify's `logController`, and the hook that opens it. */
export interface CallerTrace {
  logController: LogController;
  install(app: FastifyInstance): void;
}

/**
 * A tool-host request runs in its caller's trace context (the runner's `execute_tool` span, from
 * the request's trace headers), so that every log line of a traced call carries the trace's ids,
 * fastify's own lines included (through `logController`); lines inside the tool-host's own
 * `execute_tool` span carry that span's. Whether tracing is on is read once, here; while it is
 * off fastify's own controller writes its lines and `install` adds nothing.
 */
export function callerTrace(): CallerTrace {
  if (!tracingOn()) return { logController: new LogController(), install: () => undefined };
  const contexts = new RequestContexts<FastifyRequest>();
  return {
    logController: new TracedLogController(contexts),
    install(app) {
      app.addHook('onRequest', (req, _reply, done) => {
        const ctx = otel.propagation.extract(otel.ROOT_CONTEXT, req.headers);
        contexts.enter(req, ctx);
        otel.context.with(ctx, done);
      });
    },
  };
}

/** How a run ended, as a span records it (a RunResult). */
type Settled = { outcome: { ok: true } | { ok: false; error: { code: string; message: string } } };

/**
 * Runs one tool call in the tool-host's `execute_tool <name>` span, a child of the runner's (from
 * the request's trace headers). `run` gets the traceparent the tool sees as `ctx.traceparent`: this
 * span's, or with tracing off the caller's unchanged.
 */
export function traceToolRun<T extends Settled>(
  name: string,
  context: ToolContext,
  headers: Record<string, string | string[] | undefined>,
  run: (traceparent: string | undefined) => Promise<T>,
): Promise<T> {
  const incoming = typeof headers.traceparent === 'string' ? headers.traceparent : undefined;
  if (!tracingOn()) return run(incoming);
  return runInSpan(
    `execute_tool ${name}`,
    {
      kind: otel.SpanKind.SERVER,
      attributes: {
        [GEN_AI_OPERATION_NAME]: 'execute_tool',
        [GEN_AI_TOOL_NAME]: name,
        [GEN_AI_TOOL_CALL_ID]: context.callId,
        'agentmesh.invocation.id': context.invocationId,
      },
    },
    otel.propagation.extract(otel.ROOT_CONTEXT, headers),
    async (span) => {
      const result = await run(formatTraceparent(span.spanContext()));
      if (!result.outcome.ok) {
        span.setAttribute(ERROR_TYPE, result.outcome.error.code);
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: result.outcome.error.message });
      }
      return result;
    },
  );
}
