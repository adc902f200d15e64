import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { defineTool, startTracing, tracingEnabled, tracingOn } from '@agentmesh/shared';
import { startMesh } from '@agentmesh/test-support/mesh';
import { PLANNER_AND_HELPER, plannerAndHelper } from '@agentmesh/test-support/planner-and-helper';
import { trace } from '@opentelemetry/api';
import t from 'tap';

t.test('tracing is on only when an exporter is configured', async (t) => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
  t.equal(tracingEnabled({}), false, 'no OTEL_* at all');
  t.equal(tracingEnabled({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), false);
  t.equal(tracingEnabled(endpoint), true, 'an OTLP endpoint');
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces' }), true);
  t.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' }), true, 'a named exporter');
  t.equal(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
  t.equal(tracingEnabled({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }), false, '`none`');
  t.equal(tracingEnabled({ ...endpoint, OTEL_SDK_DISABLED: 'true' }), false, 'OTEL_SDK_DISABLED');
  t.equal(tracingEnabled({ ...endpoint, OTEL_SDK_DISABLED: 'false' }), true);
});

t.test('with no OTEL_* set no SDK starts and the tracer is the no-op one', async (t) => {
  const tracing = await startTracing({}, 'agentmesh-gateway');
  t.equal(tracing.enabled, false);
  t.equal(tracingOn(), false);
  const span = trace.getTracer('probe').startSpan('probe');
  t.equal(span.isRecording(), false, 'spans record nothing');
  t.equal(
    span.spanContext().traceId,
    '00000000000000000000000000000000',
    'and carry no context of their own',
  );
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  t.notOk(
    loaded.some((f) => f.includes('@opentelemetry/sdk-node') || f.includes('exporter-trace-otlp')),
    'neither the SDK nor an exporter was even loaded',
  );
  await tracing.shutdown();
});

t.test(
  "with tracing off a caller's traceparent still reaches the model and the tools unchanged",
  async (t) => {
    const toolSaw: (string | undefined)[] = [];
    const calc = defineTool({
      name: 'calc',
      description: 'adds one',
      input: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
      run: (args: { x: number }, ctx) => {
        toolSaw.push(ctx.traceparent);
        return args.x + 1;
      },
    });
    const mesh = await startMesh(t, {
      agentsYaml: PLANNER_AND_HELPER,
      tools: [calc],
      script: plannerAndHelper,
    });
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const res = await mesh.invoke('planner', { prompt: 'go' }, 'wait=30', { traceparent });
    t.equal(res.json.status, 'succeeded');
    t.same(
      mesh.model.requests.map((r) => r.traceparent),
      [traceparent, traceparent, traceparent],
      'every model call, the child’s too',
    );
    t.same(toolSaw, [traceparent], 'the tool');
  },
);
