import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { setTracingOn } from './mesh-tracer.js';
import { presetIdGenerator } from './preset-ids.js';
import { type TracingEnv, tracingEnabled } from './tracing-enabled.js';

/** A started (or deliberately absent) trace pipeline; `shutdown` flushes what is buffered. */
export interface Tracing {
  enabled: boolean;
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };

/**
 * Starts the OpenTelemetry SDK from the standard `OTEL_*` variables (exporter, OTLP endpoint and
 * protocol — `http/protobuf`, `http/json`, `grpc` —, sampler, propagators, batch delays); the
 * service names itself `serviceName` unless `OTEL_SERVICE_NAME` (or a `service.name` resource
 * attribute) says otherwise. Without a configured exporter nothing is loaded or started and the
 * API's no-op tracer stays in place (docs/reference/traces.md). The SDK itself reads `process.env`; `env` must be
 * that same environment.
 */
export async function startTracing(env: TracingEnv, serviceName: string): Promise<Tracing> {
  if (!tracingEnabled(env)) return OFF;
  // Loaded only now: the SDK and its exporters are heavy, and a process that does not trace never pays.
  const [{ NodeSDK }, { RandomIdGenerator }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const named =
    Boolean(env.OTEL_SERVICE_NAME?.trim()) ||
    (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((kv) => kv.trim().startsWith('service.name='));
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName }),
    idGenerator: presetIdGenerator(new RandomIdGenerator()),
    // Traces only: metrics are prom-client's (/metrics) and logs are pino's lines.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  setTracingOn(true);
  return {
    enabled: true,
    async shutdown() {
      setTracingOn(false);
      await bounded(sdk.shutdown(), SHUTDOWN_MS);
    },
  };
}

// A stopping service flushes its last spans, but never waits long on a collector that is gone.
const SHUTDOWN_MS = 5000;

function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, ms);
    timer.unref();
  });
  return Promise.race([work.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}

/**
 * Starts tracing into the given span processors (a test's InMemorySpanExporter behind a
 * SimpleSpanProcessor): parent-based sampling, W3C trace context, async-context propagation — the
 * same as startTracing, without reading any environment.
 */
export async function startTracingWith(spanProcessors: SpanProcessor[]): Promise<Tracing> {
  const { AlwaysOnSampler, NodeTracerProvider, ParentBasedSampler, RandomIdGenerator } = await import(
    '@opentelemetry/sdk-trace-node'
  );
  const provider = new NodeTracerProvider({
    spanProcessors,
    idGenerator: presetIdGenerator(new RandomIdGenerator()),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  });
  provider.register();
  setTracingOn(true);
  return {
    enabled: true,
    async shutdown() {
      setTracingOn(false);
      await provider.shutdown();
    },
  };
}
