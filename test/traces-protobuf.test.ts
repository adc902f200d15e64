import { meshTracer, startTracing, tracingOn } from '@agentmesh/shared';
import { startOtlpCollector } from '@agentmesh/test-support/otlp-collector';
import t from 'tap';

t.test(
  'the SDK exports over OTLP http/protobuf under OTEL_SERVICE_NAME, and flushes on shutdown',
  async (t) => {
    const collector = await startOtlpCollector();
    t.teardown(() => collector.close());
    // The SDK reads process.env itself; this file's process is its own.
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'renamed-gateway',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    const tracing = await startTracing(process.env, 'agentmesh-gateway');
    t.equal(tracing.enabled, true);
    t.equal(tracingOn(), true);
    meshTracer().startSpan('probe-span').end();
    t.equal(collector.requests.length, 0, 'batched, not sent yet');
    await tracing.shutdown();
    t.equal(tracingOn(), false);
    const [sent] = collector.requests;
    t.equal(sent?.path, '/v1/traces');
    t.equal(sent?.contentType, 'application/x-protobuf');
    // Protobuf keeps strings as UTF-8 bytes: the span's and the service's names are readable in it.
    t.ok(sent?.body.includes('probe-span'), 'the span');
    t.ok(sent?.body.includes('renamed-gateway'), 'OTEL_SERVICE_NAME wins');
    t.notOk(sent?.body.includes('agentmesh-gateway'), 'over the default name');
  },
);
