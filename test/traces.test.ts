// Traces (docs/reference/traces.md): the W3C traceparent, tracing off (no SDK loaded, a caller's
// traceparent passed on unchanged), and tracing on (one invocation is one trace across the mesh, log
// lines carry its ids). Each former file's tests are one heading subtest below, their meshes and
// helpers inside it. Tracing on comes last and gives back the OpenTelemetry globals it registered.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import {
  callerTraceparent,
  defineTool,
  formatTraceparent,
  invocationSpanId,
  loggerOptions,
  parseTraceparent,
  startTracing,
  startTracingWith,
  tracingEnabled,
  tracingOn,
} from '@agentmesh/shared';
import { listenGateway, startMesh } from '@agentmesh/test-support/mesh';
import { PLANNER_AND_HELPER, plannerAndHelper } from '@agentmesh/test-support/planner-and-helper';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import t from 'tap';

// ---------------------------------------------------------------------------------------------------
// The W3C traceparent with nothing running: parsing and formatting, the span id an invocation
// derives, and what is passed on while tracing is off.
t.test(
  'a W3C traceparent parses, formats, derives span ids and passes on unchanged with tracing off',
  async (t) => {
    const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
    const SPAN = '00f067aa0ba902b7';

    t.test('a W3C traceparent parses to its span context and formats back', async (t) => {
      const sc = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
      t.same(sc, { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
      t.equal(formatTraceparent(sc!), `00-${TRACE}-${SPAN}-01`);
      t.equal(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 0 }), `00-${TRACE}-${SPAN}-00`);
      t.equal(
        parseTraceparent(`01-${TRACE}-${SPAN}-01-later-fields`)?.spanId,
        SPAN,
        'a later version may add fields',
      );
    });

    t.test('a malformed traceparent names no span', async (t) => {
      for (const bad of [
        undefined,
        '',
        'garbage',
        `00-${TRACE}-${SPAN}-01-extra`,
        `ff-${TRACE}-${SPAN}-01`,
        `00-${'0'.repeat(32)}-${SPAN}-01`,
        `00-${TRACE}-${'0'.repeat(16)}-01`,
        `00-${TRACE.toUpperCase()}-${SPAN}-01`,
        `00-${TRACE}-${SPAN}-01${'x'.repeat(1000)}`,
      ])
        t.equal(parseTraceparent(bad), undefined, String(bad).slice(0, 60));
    });

    t.test(
      "an invocation's span id is the same wherever it is derived, and differs by invocation",
      async (t) => {
        t.equal(invocationSpanId(TRACE, 'inv_a'), invocationSpanId(TRACE, 'inv_a'));
        t.not(invocationSpanId(TRACE, 'inv_a'), invocationSpanId(TRACE, 'inv_b'));
        t.match(invocationSpanId(TRACE, 'inv_a'), /^[0-9a-f]{16}$/);
      },
    );

    t.test("with tracing off the caller's traceparent is passed on unchanged", async (t) => {
      t.equal(callerTraceparent(`00-${TRACE}-${SPAN}-01`), `00-${TRACE}-${SPAN}-01`);
      t.equal(callerTraceparent(undefined), undefined);
      t.equal(callerTraceparent(`00-${TRACE}-${SPAN}`), undefined, 'a malformed one is dropped');
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// Tracing off: only a configured exporter turns it on; without one no SDK is loaded and a
// caller's traceparent still reaches the model and the tools. Before tracing is turned on below.
t.test("tracing is off without an exporter: no SDK, the caller's traceparent passed on", async (t) => {
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
});

// ---------------------------------------------------------------------------------------------------
// Tracing on, into memory: one invocation with a delegation and a tool call is one trace across
// the mesh, sampling follows the caller, and log lines carry the trace's ids.
t.test('tracing on: one invocation is one trace across the mesh; log lines carry its ids', async (t) => {
  // One provider for this section, as a service process has one; spans land in memory. At its end the
  // provider is shut down and the OpenTelemetry API's globals it registered (tracer provider, context
  // manager, propagator) are given back: a provider shut down stays registered otherwise.
  const exporter = new InMemorySpanExporter();
  const tracing = await startTracingWith([new SimpleSpanProcessor(exporter)]);
  t.teardown(async () => {
    await tracing.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
  const idOf = (s: ReadableSpan) => s.spanContext().spanId;

  t.test(
    'one invocation with a delegation and a tool call is one trace, a tree across the mesh',
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
      exporter.reset();
      const traceId = randomBytes(16).toString('hex');
      const clientSpan = randomBytes(8).toString('hex');
      const res = await mesh.invoke('planner', { prompt: 'go' }, 'wait=30', {
        traceparent: `00-${traceId}-${clientSpan}-01`,
      });
      t.equal(res.json.status, 'succeeded');
      const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
      await waitUntil(
        async () =>
          named('invoke_agent planner').length === 1 && named('POST /agents/planner/invoke').length === 1,
        10_000,
        () => `spans so far: ${exporter.getFinishedSpans().map((s) => s.name)}`,
      );
      const spans = exporter.getFinishedSpans();
      t.same(
        [...new Set(spans.map((s) => s.spanContext().traceId))],
        [traceId],
        'every span is in the one trace',
      );

      const [http] = named('POST /agents/planner/invoke');
      t.equal(http!.kind, SpanKind.SERVER);
      t.equal(parentOf(http!), clientSpan, "the gateway's span hangs under the caller's");
      t.equal(http!.attributes['http.route'], '/agents/planner/invoke');
      t.equal(http!.attributes['http.response.status_code'], 200);

      const [invokePlanner] = named('invoke_agent planner');
      t.equal(parentOf(invokePlanner!), idOf(http!), 'the root invocation hangs under the HTTP span');
      t.equal(invokePlanner!.attributes['gen_ai.operation.name'], 'invoke_agent');
      t.equal(invokePlanner!.attributes['gen_ai.agent.name'], 'planner');

      const plannerActivations = named('activation planner');
      t.ok(plannerActivations.length >= 1);
      for (const a of plannerActivations)
        t.equal(
          parentOf(a),
          idOf(invokePlanner!),
          'every activation of the planner, resumed ones too, hangs under its invoke_agent span',
        );
      const underPlanner = new Set(plannerActivations.map(idOf));

      const chats = named('chat fake');
      t.equal(chats.length, 3, 'one chat span per model call');
      const plannerChats = chats.filter((c) => underPlanner.has(parentOf(c)!));
      t.equal(plannerChats.length, 2, "the planner's model calls hang under its activations");
      for (const c of chats) {
        t.equal(c.kind, SpanKind.CLIENT);
        t.match(c.attributes, {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'fake',
          'gen_ai.provider.name': 'openai',
          'gen_ai.usage.input_tokens': 11,
          'gen_ai.usage.output_tokens': 7,
        });
      }

      const tools = named('execute_tool calc');
      const runnerTool = tools.find((s) => s.kind === SpanKind.CLIENT);
      const hostTool = tools.find((s) => s.kind === SpanKind.SERVER);
      t.ok(runnerTool && hostTool, 'execute_tool on the runner and on the tool-host');
      t.ok(underPlanner.has(parentOf(runnerTool!)!), "the runner's tool span hangs under the activation");
      t.equal(parentOf(hostTool!), idOf(runnerTool!), "the tool-host's hangs under the runner's");
      t.equal(runnerTool!.attributes['gen_ai.tool.name'], 'calc');
      t.same(
        toolSaw,
        [`00-${traceId}-${idOf(hostTool!)}-01`],
        "the tool sees the tool-host span's traceparent",
      );

      const [invokeHelper] = named('invoke_agent helper');
      t.ok(invokeHelper, 'the delegation has its invoke_agent span');
      t.ok(
        underPlanner.has(parentOf(invokeHelper!)!),
        'the delegation hangs under the activation that made it',
      );
      const [helperActivation] = named('activation helper');
      t.equal(
        parentOf(helperActivation!),
        idOf(invokeHelper!),
        "the child's work hangs under its invoke_agent span",
      );
      const helperChats = chats.filter((c) => parentOf(c) === idOf(helperActivation!));
      t.equal(helperChats.length, 1, "the child's model call hangs under the child's activation");

      // The model endpoint got the trace context of each call's own span.
      const chatIds = new Set(chats.map(idOf));
      t.equal(mesh.model.requests.length, 3);
      for (const r of mesh.model.requests) {
        const sc = parseTraceparent(r.traceparent);
        t.equal(sc?.traceId, traceId, 'the model request carries the trace');
        t.ok(chatIds.has(sc!.spanId), '…as the span of its chat call');
      }
      t.equal(parseTraceparent(mesh.model.of('helper')[0]!.traceparent)!.spanId, idOf(helperChats[0]!));
    },
  );

  t.test('a request without a traceparent starts a trace at the gateway', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: '  solo: {instructions: "@agent solo"}\n',
      script: () => ({ final: 'hi' }),
    });
    exporter.reset();
    const res = await mesh.invoke('solo', { prompt: 'x' });
    t.equal(res.json.status, 'succeeded');
    await waitUntil(
      async () => exporter.getFinishedSpans().some((s) => s.name === 'POST /agents/solo/invoke'),
      10_000,
      () => 'the HTTP span',
    );
    const spans = exporter.getFinishedSpans();
    const http = spans.find((s) => s.name === 'POST /agents/solo/invoke')!;
    t.equal(parentOf(http), undefined, 'the HTTP span is the root');
    t.same(
      [...new Set(spans.map((s) => s.spanContext().traceId))],
      [http.spanContext().traceId],
      'one trace',
    );
    t.same(spans.map((s) => s.name).sort(), [
      'POST /agents/solo/invoke',
      'activation solo',
      'chat fake',
      'invoke_agent solo',
    ]);
  });

  t.test('an unsampled caller turns the whole tree unsampled, and its flag still travels', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: '  solo: {instructions: "@agent solo"}\n',
      script: () => ({ final: 'hi' }),
    });
    exporter.reset();
    const traceId = randomBytes(16).toString('hex');
    const res = await mesh.invoke('solo', { prompt: 'x' }, 'wait=30', {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00`,
    });
    t.equal(res.json.status, 'succeeded');
    t.same(exporter.getFinishedSpans(), [], 'nothing recorded');
    const sc = parseTraceparent(mesh.model.requests[0]!.traceparent);
    t.equal(sc?.traceId, traceId, 'the model request still carries the trace');
    t.equal(sc?.traceFlags, 0, '…unsampled');
  });

  t.test('a log line written inside a span carries its trace_id and span_id', async (t) => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    });
    const log = pino(loggerOptions('test', 'info'), sink);
    const span = trace.getTracer('test').startSpan('work');
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => log.child({ reqId: 'r' }).warn('inside'));
    span.end();
    log.warn('outside');
    await new Promise((r) => setImmediate(r));
    t.match(lines[0], {
      msg: 'inside',
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
    t.notOk('trace_id' in lines[1]!, 'no ids outside a span');
  });

  t.test(
    "fastify's own request lines carry the HTTP span's ids; a request no hook sees keeps its line",
    async (t) => {
      const mesh = await startMesh(t, {
        agentsYaml: '  solo: {instructions: "@agent solo"}\n',
        script: () => ({ final: 'hi' }),
      });
      const lines: Record<string, any>[] = [];
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(JSON.parse(String(chunk)));
          cb();
        },
      });
      const { gateway } = await listenGateway(t, mesh, {
        logger: pino(loggerOptions('gateway', 'debug'), sink),
      });
      exporter.reset();
      t.equal((await gateway.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      // A bad percent-encoding fails before routing: no hook runs, so no span opens.
      t.equal((await gateway.app.inject({ method: 'GET', url: '/invocations/%E0%A4%A' })).statusCode, 400);
      await waitUntil(
        async () => exporter.getFinishedSpans().some((s) => s.name === 'GET /healthz'),
        10_000,
        () => 'the HTTP span',
      );
      const http = exporter
        .getFinishedSpans()
        .find((s) => s.name === 'GET /healthz')!
        .spanContext();
      const of = (url: string) => {
        const reqId = lines.find((l) => l.msg === 'incoming request' && l.req?.url === url)?.reqId;
        return lines.filter((l) => l.reqId !== undefined && l.reqId === reqId);
      };
      t.same(
        of('/healthz').map((l) => [l.msg, l.level, l.trace_id, l.span_id]),
        [
          ['incoming request', 20, http.traceId, http.spanId],
          ['request completed', 20, http.traceId, http.spanId],
        ],
        'both lines inside the span, at debug as before',
      );
      t.same(
        of('/invocations/%E0%A4%A').map((l) => [l.msg, 'trace_id' in l]),
        [['incoming request', false]],
        'the bad URL still has its line, without ids: it has no span',
      );
    },
  );
});
