// The OpenTelemetry API for the services' span code: they depend on this package only.
export * as otel from '@opentelemetry/api';
export * from './gen-ai-attributes.js';
export {
  callerTraceparent,
  type InvocationEnd,
  invocationContext,
  invocationSpanId,
  recordInvocationSpan,
} from './invocation-trace.js';
export { meshTracer, tracingOn } from './mesh-tracer.js';
export { RequestContexts } from './request-contexts.js';
export { runInSpan } from './run-in-span.js';
export { startTracing, startTracingWith, type Tracing } from './start-tracing.js';
export { traceLogFields } from './trace-log-fields.js';
export { TracedLogController } from './traced-log-controller.js';
export { contextOf, formatTraceparent, parseTraceparent, traceHeaders } from './traceparent.js';
export { type TracingEnv, tracingEnabled } from './tracing-enabled.js';
