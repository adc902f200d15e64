import { randomBytes } from 'node:crypto';
import { parseTraceparent } from '@agentmesh/shared';
import { startMesh, startService } from '@agentmesh/test-support/mesh';
import { startOtlpCollector } from '@agentmesh/test-support/otlp-collector';
import { startPlannerAndHelperProcesses } from '@agentmesh/test-support/planner-and-helper';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t from 'tap';

// The tool answers with the traceparent it was given, so the planner's model shows what it saw.
const TOOLS = `export default {
  name: 'calc',
  description: 'adds one',
  input: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  run: (args, ctx) => ({ sum: args.x + 1, traceparent: ctx.traceparent }),
};
`;

t.test(
  'gateway, two runners and the tool-host as processes export one trace over OTLP http/json',
  async (t) => {
    const collector = await startOtlpCollector();
    t.teardown(() => collector.close());
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // One runner per agent, so that the tree's work is split over both processes.
    const { mesh, invokeTraced } = await startPlannerAndHelperProcesses(t, TOOLS, otel);

    const traceId = randomBytes(16).toString('hex');
    const view = await invokeTraced(traceId);
    t.equal(view.status, 'succeeded');

    const inTrace = () => collector.spans.filter((s) => s.traceId === traceId);
    const names = () => inTrace().map((s) => `${s.service}: ${s.name}`);
    await waitUntil(
      async () =>
        ['invoke_agent planner', 'invoke_agent helper', 'POST /agents/planner/invoke'].every((n) =>
          inTrace().some((s) => s.name === n),
        ) && inTrace().filter((s) => s.name === 'execute_tool calc').length === 2,
      30_000,
      () => `spans so far: ${names()}`,
    );
    const spans = inTrace();
    const processes = new Set(spans.map((s) => `${s.service}/${s.pid}`));
    t.equal(processes.size, 4, `four processes sent spans of the trace: ${[...processes]}`);
    t.same(
      [...new Set(spans.map((s) => s.service))].sort(),
      ['agentmesh-gateway', 'agentmesh-runner', 'agentmesh-tool-host'],
      'each names itself',
    );
    const by = (service: string, name: string) =>
      spans.filter((s) => s.service === service && s.name === name);
    const [http] = by('agentmesh-gateway', 'POST /agents/planner/invoke');
    const [invokePlanner] = by('agentmesh-runner', 'invoke_agent planner');
    const [invokeHelper] = by('agentmesh-runner', 'invoke_agent helper');
    const [hostTool] = by('agentmesh-tool-host', 'execute_tool calc');
    const [runnerTool] = by('agentmesh-runner', 'execute_tool calc');
    t.equal(http?.parentSpanId, 'ab'.repeat(8), "the gateway's span hangs under the caller's");
    t.equal(invokePlanner?.parentSpanId, http?.spanId, 'the root invocation hangs under the HTTP span');
    t.equal(hostTool?.parentSpanId, runnerTool?.spanId, "the tool-host's tool span hangs under the runner's");
    const helperActivation = by('agentmesh-runner', 'activation helper')[0];
    t.equal(
      helperActivation?.parentSpanId,
      invokeHelper?.spanId,
      'the child activation hangs under its invoke_agent',
    );
    t.not(helperActivation?.pid, invokePlanner?.pid, '…on the other runner');
    t.match(by('agentmesh-runner', 'chat fake')[0]?.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'fake',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
    });
    // What the tool saw as ctx.traceparent reached the planner's model in the tool message.
    const toolMessage = mesh.model
      .of('planner')
      .flatMap((r) => r.messages)
      .find((m) => m.role === 'tool' && m.content?.includes('sum'));
    const seen = JSON.parse(toolMessage!.content!) as { traceparent: string };
    t.equal(
      parseTraceparent(seen.traceparent)?.spanId,
      hostTool?.spanId,
      "the tool sees its span's traceparent",
    );
    t.ok(
      collector.requests.every((r) => r.path === '/v1/traces'),
      'only traces are exported (metrics and logs stay with prom-client and pino)',
    );
  },
);

t.test('a runner stopping flushes the spans it still holds', async (t) => {
  const collector = await startOtlpCollector();
  t.teardown(() => collector.close());
  const mesh = await startMesh(t, {
    agentsYaml: '  solo: {instructions: "@agent solo"}\n',
    runners: 0,
    script: () => ({ final: 'hi' }),
  });
  // Batches wait ten minutes: only the shutdown's flush can send these spans in time.
  const runner = startService(t, 'runner', {
    ...mesh.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => runner.output(),
  );
  const traceId = randomBytes(16).toString('hex');
  const res = await mesh.invoke('solo', { prompt: 'go' }, 'wait=30', {
    traceparent: `00-${traceId}-${'cd'.repeat(8)}-01`,
  });
  t.equal(res.json.status, 'succeeded');
  t.equal(collector.spans.length, 0, 'nothing exported yet');
  process.kill(-runner.proc.pid!, 'SIGTERM');
  // Not its exit code: that is npm's, through tsx, whose signal relay to the child may give up on
  // a loaded machine and exit 143 while the runner itself still drains and flushes.
  await runner.exited;
  t.same(
    collector.spans.map((s) => s.name).sort(),
    ['activation solo', 'chat fake', 'invoke_agent solo'],
    'every span arrived before the runner exited',
  );
  t.ok(collector.spans.every((s) => s.traceId === traceId && s.service === 'agentmesh-runner'));
});
