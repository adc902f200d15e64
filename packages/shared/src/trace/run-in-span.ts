import {
  type Context,
  context,
  type Span,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { meshTracer } from './mesh-tracer.js';

/**
 * Runs `fn` inside a new span under `parent` (the span is active for everything `fn` does, so log
 * lines and nested spans see it) and ends the span when `fn` settles. A rejection marks the span
 * as an error unless `isError` says it is control flow (a parent parking on its children).
 */
export async function runInSpan<T>(
  name: string,
  options: SpanOptions,
  parent: Context,
  fn: (span: Span) => Promise<T>,
  isError: (e: unknown) => boolean = () => true,
): Promise<T> {
  const span = meshTracer().startSpan(name, options, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    if (isError(e)) {
      const err = e instanceof Error ? e : new Error(String(e));
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    }
    throw e;
  } finally {
    span.end();
  }
}
