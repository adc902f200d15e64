import { meshTracer, otel, tracingOn } from '@agentmesh/shared';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const spans = new WeakMap<FastifyRequest, otel.Span>();

/**
 * The gateway's HTTP server span (DESIGN §15): one per request, named by method and route template
 * (`POST /agents/planner/invoke`; the method alone when no route matched), a child of the caller's
 * `traceparent`. It is the active span while the request is handled, so an invocation started by
 * it hangs under it and every log line of the request carries its ids. Nothing is installed while
 * tracing is off.
 */
export function installHttpSpans(app: FastifyInstance): void {
  if (!tracingOn()) return;
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
    otel.context.with(otel.trace.setSpan(parent, span), done);
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
