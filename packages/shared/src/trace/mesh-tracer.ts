import { type Tracer, trace } from '@opentelemetry/api';

// Set by startTracing / startTracingWith: while false every helper here is a pass-through.
let on = false;

/** True while an SDK exports this process's spans (startTracing found an exporter, or a test installed one). */
export function tracingOn(): boolean {
  return on;
}

/** Marks tracing started or stopped; only the start functions call it. */
export function setTracingOn(value: boolean): void {
  on = value;
}

/** The tracer every agentmesh span comes from (the API's no-op one while no SDK runs). */
export function meshTracer(): Tracer {
  return trace.getTracer('agentmesh');
}
