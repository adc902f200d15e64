import { randomBytes } from 'node:crypto';
import { startOtlpCollector } from '@agentmesh/test-support/otlp-collector';
import { startPlannerAndHelperProcesses } from '@agentmesh/test-support/planner-and-helper';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t from 'tap';

// The tool writes a line of its own through ctx.log, inside the tool-host's execute_tool span.
const TOOLS = `export default {
  name: 'calc',
  description: 'adds one',
  input: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  run: (args, ctx) => {
    ctx.log.info({ x: args.x }, 'adding one');
    return args.x + 1;
  },
};
`;

/** One JSON log line of a service (pino's fields, ours, and the request's from fastify). */
type Line = Record<string, any>;

/** The JSON lines of a process's output (npm's own words, if any, are skipped). */
const linesOf = (output: string): Line[] =>
  output.split('\n').flatMap((text) => {
    try {
      const line = JSON.parse(text) as unknown;
      return line && typeof line === 'object' ? [line as Line] : [];
    } catch {
      return [];
    }
  });

/** The lines of the request whose "incoming request" line matches `url`, by its reqId. */
const requestLines = (lines: Line[], url: (u: string) => boolean): Line[] => {
  const first = lines.find((l) => l.msg === 'incoming request' && url(String(l.req?.url)));
  return first ? lines.filter((l) => l.reqId === first.reqId) : [];
};

t.test(
  'every log line of a traced invocation, in the gateway, the runners and the tool-host, carries its trace and span ids',
  async (t) => {
    const collector = await startOtlpCollector();
    t.teardown(() => collector.close());
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_LEVEL: 'debug', // fastify's per-request lines are written at debug
      LOG_FORMAT: 'json',
    };
    const { mesh, runners, gateway, invokeTraced } = await startPlannerAndHelperProcesses(t, TOOLS, env);

    const traceId = randomBytes(16).toString('hex');
    const view = await invokeTraced(traceId);
    t.equal(view.status, 'succeeded');

    // Every line is in: the requests' last lines and both invocations' ends; every span exported.
    const completed = (lines: Line[]) => lines.some((l) => l.msg === 'request completed');
    const gatewayLines = () =>
      requestLines(linesOf(gateway.output()), (u) => u.startsWith('/agents/planner/'));
    const hostLines = () =>
      requestLines(linesOf(mesh.toolHostProcess!.output()), (u) => u === '/tools/calc/invoke');
    const treeLines = () =>
      runners
        .flatMap((r) => linesOf(r.output()))
        .filter((l) => l.rootId === view.id || l.invocationId === view.id);
    const inTrace = () => collector.spans.filter((s) => s.traceId === traceId);
    await waitUntil(
      async () =>
        completed(gatewayLines()) &&
        completed(hostLines()) &&
        treeLines().filter((l) => l.msg === 'invocation finished').length === 2 &&
        ['POST /agents/planner/invoke', 'invoke_agent planner', 'invoke_agent helper'].every((n) =>
          inTrace().some((s) => s.name === n),
        ) &&
        inTrace().filter((s) => s.name === 'execute_tool calc').length === 2,
      60_000,
      () => `lines and spans; spans so far: ${inTrace().map((s) => `${s.service}: ${s.name}`)}`,
    );
    const span = (service: string, name: string) =>
      inTrace().find((s) => s.service === `agentmesh-${service}` && s.name === name)?.spanId;

    const http = span('gateway', 'POST /agents/planner/invoke');
    t.same(
      gatewayLines().map((l) => [l.msg, l.trace_id, l.span_id]),
      [
        ['incoming request', traceId, http],
        ['request completed', traceId, http],
      ],
      "the gateway's request lines carry its HTTP span",
    );
    const untraced = linesOf(gateway.output()).filter(
      (l) => l.reqId !== undefined && !(l.trace_id && l.span_id),
    );
    t.same(
      untraced,
      [],
      'every request line of the gateway carries ids (readiness polls start traces of their own)',
    );

    // The tool-host's request lines carry its caller's span (the runner's execute_tool); the tool's
    // own line, the tool-host's execute_tool span.
    const runnerTool = span('runner', 'execute_tool calc');
    const hostTool = span('tool-host', 'execute_tool calc');
    t.same(
      hostLines().map((l) => [l.msg, l.trace_id, l.span_id]),
      [
        ['incoming request', traceId, runnerTool],
        ['adding one', traceId, hostTool],
        ['request completed', traceId, runnerTool],
      ],
      "the tool-host's lines of the call carry the trace",
    );

    const activations = new Set(
      inTrace()
        .filter((s) => s.name.startsWith('activation '))
        .map((s) => s.spanId),
    );
    const runnerLines = treeLines();
    t.ok(runnerLines.length >= 4, 'started and finished, for the planner and its helper');
    for (const l of runnerLines) {
      t.equal(l.trace_id, traceId, `runner: ${l.msg} (${l.agent})`);
      t.ok(activations.has(l.span_id), '…inside one of the activations');
    }
  },
);
