import { meshTracer, otel, RequestContexts, TracedLogController, tracingOn } from '@agentmesh/shared';
import { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';

/** The gateway's HTTP server spans: fastify's `logController`, and the hooks that open and end them. */
export interface HttpSpans {
  logController: LogController;
  install(app: FastifyInstance): void;
}

/**
 * The gateway's HTTP server span (docs/reference/traces.md): one per request, named by method and route template
 * (`POST /agents/planner/invoke`; the method alone when no route matched), a child of the caller's
 * `traceparent`. It is the active span while the request is handled, so an invocation started by
 * it hangs under it, and every log line of the request carries its ids, fastify's own lines
 * included (through `logController`). Whether tracing is on is read once, here; while it is off
 * fastify's own controller writes its lines and `install` adds nothing.
 */
export function httpSpans(): HttpSpans {
  if (!tracingOn()) return { logController: new LogController(), install: () => undefined };
  const contexts = new RequestContexts<FastifyRequest>();
  return {
    logController: new TracedLogController(contexts),
    install: (app) => installHooks(app, contexts),
  };
}

const spans = new WeakMap<FastifyRequest, otel.Span>();

function installHooks(app: FastifyInstance, contexts: RequestContexts<FastifyRequest>): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const parent = otel.propagation.extract(otel.ROOT_CONTEXT, req.headers);
    const route = req.is404 ? undefined : req.routeOptions.url;
    const span = meshTracer().startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        kind: otel.SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': req.url.split('?', 1)[0]!,
          'url.scheme': req.protocol,
          ...(route ? { 'http.route': route } : {}),
        },
      },
      parent,
    );
    spans.set(req, span);
    // Everything after this hook (the handler included) runs inside the span's context.
    const ctx = otel.trace.setSpan(parent, span);
    contexts.enter(req, ctx);
    otel.context.with(ctx, done);
  });
  const end = (req: FastifyRequest, status?: number) => {
    const span = spans.get(req);
    if (!span) return;
    spans.delete(req);
    if (status !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: otel.SpanStatusCode.ERROR });
    }
    span.end();
  };
  app.addHook('onResponse', async (req, reply) => end(req, reply.statusCode));
  app.addHook('onRequestAbort', async (req) => end(req));
}
