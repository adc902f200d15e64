// With tracing on, every line of a call carries its trace: fastify's own request lines the caller's
// span (from the call's traceparent), the tool's lines the tool-host's execute_tool span.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loggerOptions, startTracingWith } from '@agentmesh/shared';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { buildToolHost, loadToolDefinitions } from '../src/index.js';

// One provider for the whole file, as the process has one; no span is exported anywhere.
const tracing = await startTracingWith([]);
t.teardown(() => tracing.shutdown());

const tools = loadToolDefinitions([
  {
    name: 'ping',
    description: 'Answers pong.',
    input: { type: 'object' },
    run: (_args, ctx) => {
      ctx.log.info('ponging');
      return 'pong';
    },
  },
]);
const body = {
  args: {},
  context: {
    invocationId: 'inv_0123456789abcdef0123456789abcdef',
    callId: 't0-call0',
    agent: 'a',
    deadline: '2030-01-01T00:00:00.000Z',
    idempotencyKey: 'k',
  },
};

/** A tool-host writing its JSON lines at `level` into an array. */
function hostWithLines(t: Test, level: string) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  const app = buildToolHost({ tools, logger: pino(loggerOptions('tool-host', level), sink) });
  t.teardown(() => app.close());
  return { app, lines };
}

t.test(
  "fastify's request lines of a traced call carry the caller's span, at debug; the tool's line its own span",
  async (t) => {
    const { app, lines } = hostWithLines(t, 'debug');
    const traceId = randomBytes(16).toString('hex');
    const caller = randomBytes(8).toString('hex');
    const res = await app.inject({
      method: 'POST',
      url: '/tools/ping/invoke',
      headers: { traceparent: `00-${traceId}-${caller}-01` },
      payload: body,
    });
    t.equal(res.statusCode, 200);
    const reqId = lines.find((l) => l.msg === 'incoming request')?.reqId;
    t.ok(reqId, 'the request has its lines');
    const own = lines.filter((l) => l.reqId === reqId);
    const callerOrTool = (span: string) =>
      span === caller ? 'caller' : /^[0-9a-f]{16}$/.test(span) && 'tool';
    t.same(
      own.map((l) => [l.msg, l.level, l.trace_id, callerOrTool(l.span_id)]),
      [
        ['incoming request', 20, traceId, 'caller'],
        ['ponging', 20, traceId, 'tool'],
        ['request completed', 20, traceId, 'caller'],
      ],
      "fastify's lines at debug inside the caller's span, the tool's inside the tool-host's execute_tool",
    );
    t.match(own[0], { req: { method: 'POST', url: '/tools/ping/invoke' } }, "fastify's request fields");
    t.match(own[2], { res: { statusCode: 200 }, responseTime: Number }, "fastify's response fields");
  },
);

t.test(
  "a call without a traceparent: fastify's request lines carry no ids (no caller's span), the tool's line its own span's",
  async (t) => {
    const { app, lines } = hostWithLines(t, 'debug');
    t.equal((await app.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body })).statusCode, 200);
    const reqId = lines.find((l) => l.msg === 'incoming request')?.reqId;
    t.same(
      lines.filter((l) => l.reqId === reqId).map((l) => [l.msg, 'trace_id' in l]),
      [
        ['incoming request', false],
        ['ponging', true],
        ['request completed', false],
      ],
    );
  },
);
