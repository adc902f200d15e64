// The tool-host's HTTP app (buildToolHost), through fastify's inject and a real socket: the internal
// token, GET /tools and POST /tools/{name}/invoke (src/routes/tools.ts), /readyz
// (src/routes/readiness.ts), the cancel watch aborting a running call (src/cancel/, on a real Redis)
// and the traced lines of a call (src/tracing.ts). Idempotency keys are idempotency.test.ts.
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import {
  keyLayout,
  loggerOptions,
  otel,
  startTracingWith,
  type ToolDefinition,
  type ToolRunContext,
} from '@agentmesh/shared';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { stalledConnection, within } from '@agentmesh/test-support/stalled-connection';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { Agent, fetch } from 'undici';
import { argsHash } from '../src/idempotency/args-hash.js';
import { buildToolHost, loadToolDefinitions, OutcomeStore } from '../src/index.js';
import type { McpConnection } from '../src/mcp/mcp-connection.js';

// The tool-host's internal token: with MESH_INTERNAL_TOKEN set, every route but /healthz demands it.
t.test("buildToolHost's internal token", async (t) => {
  const tools = loadToolDefinitions([
    { name: 'ping', description: 'Answers pong.', input: { type: 'object' }, run: () => 'pong' },
  ]);
  const app = buildToolHost({ tools, internalToken: 's3cret-token' });
  t.teardown(() => app.close());
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
  const unauthorized = { error: { code: 'unauthorized', message: 'A valid internal token is required.' } };

  t.test('a call without the internal token answers 401 unauthorized', async (t) => {
    const res = await app.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body });
    t.equal(res.statusCode, 401);
    t.strictSame(res.json(), unauthorized);
    const list = await app.inject({ method: 'GET', url: '/tools' });
    t.equal(list.statusCode, 401);
    t.strictSame(list.json(), unauthorized);
  });

  t.test('a wrong token, or the right one without Bearer, answers 401 unauthorized', async (t) => {
    for (const authorization of [
      'Bearer wrong',
      'Bearer s3cret-toke',
      's3cret-token',
      'Bearer s3cret-token2',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/tools/ping/invoke',
        headers: { authorization },
        payload: body,
      });
      t.equal(res.statusCode, 401, authorization);
      t.strictSame(res.json(), unauthorized);
    }
  });

  t.test('the right token is let through', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/tools/ping/invoke',
      headers: { authorization: 'Bearer s3cret-token' },
      payload: body,
    });
    t.equal(res.statusCode, 200);
    t.strictSame(res.json(), { result: 'pong' });
  });

  t.test('/healthz needs no token', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    t.equal(res.statusCode, 200);
    t.strictSame(res.json(), { status: 'ok' });
  });

  t.test('without a token configured no Authorization is needed', async (t) => {
    const open = buildToolHost({ tools });
    t.teardown(() => open.close());
    const res = await open.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body });
    t.equal(res.statusCode, 200);
  });
});

// GET /tools and POST /tools/{name}/invoke through buildToolHost: what the runner (and so the
// model) observes of listing, validation, context injection, failures and timeouts.
t.test('GET /tools and POST /tools/{name}/invoke', async (t) => {
  const seen: ToolRunContext[] = [];
  const finished: string[] = [];
  const textInput = {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  };
  const pause = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  const tools: ToolDefinition[] = [
    {
      name: 'echo',
      description: 'Echoes its text.',
      input: textInput,
      idempotent: true,
      run: (args, ctx) => {
        seen.push(ctx);
        return { echoed: (args as { text: string }).text };
      },
    },
    {
      name: 'boom',
      description: 'Always fails.',
      input: { type: 'object' },
      run: () => {
        throw new Error('disk on fire');
      },
    },
    {
      name: 'sleepy',
      description: 'Never answers in time.',
      input: { type: 'object' },
      timeoutMs: 50,
      run: async (_args, ctx) => {
        seen.push(ctx);
        await pause(10_000, ctx.signal);
        return 'woke up';
      },
    },
    {
      name: 'patient',
      description: 'Takes a moment.',
      input: { type: 'object' },
      run: async (_args, ctx) => {
        seen.push(ctx);
        await pause(150, ctx.signal);
        const result = ctx.signal.aborted ? 'aborted' : 'done';
        finished.push(result);
        return result;
      },
    },
    {
      name: 'counter',
      description: 'Returns a count.',
      input: { type: 'object' },
      output: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      run: (args) => ((args as { bad?: boolean }).bad ? { n: 'many' } : { n: 3 }),
    },
    { name: 'silent', description: 'Returns nothing.', input: { type: 'object' }, run: () => undefined },
  ];

  const app = buildToolHost({ tools: loadToolDefinitions(tools) });
  t.teardown(() => app.close());
  const context = {
    invocationId: 'inv_0123456789abcdef0123456789abcdef',
    callId: 't0-call1',
    agent: 'planner',
    deadline: '2030-01-02T03:04:05.000Z',
    idempotencyKey: 'inv_0123456789abcdef0123456789abcdef/t0-call1',
  };
  const call = async (name: string, args: unknown, body: object = { args, context }) => {
    const res = await app.inject({ method: 'POST', url: `/tools/${name}/invoke`, payload: body });
    return { status: res.statusCode, json: res.json() };
  };

  t.test(
    'GET /tools lists every tool with its name, description, input schema and idempotent flag',
    async (t) => {
      const res = await app.inject({ method: 'GET', url: '/tools' });
      t.equal(res.statusCode, 200);
      const listed = res.json().tools as { name: string }[];
      t.strictSame(
        listed.map((x) => x.name),
        ['echo', 'boom', 'sleepy', 'patient', 'counter', 'silent'],
      );
      t.strictSame(listed[0], {
        name: 'echo',
        description: 'Echoes its text.',
        input: textInput,
        idempotent: true,
        source: 'native',
      });
      t.strictSame(listed[2], {
        name: 'sleepy',
        description: 'Never answers in time.',
        input: { type: 'object' },
        idempotent: false,
        source: 'native',
        timeoutMs: 50,
      });
    },
  );

  t.test('a call runs the tool and answers its result', async (t) => {
    t.strictSame(await call('echo', { text: 'hi' }), { status: 200, json: { result: { echoed: 'hi' } } });
    t.strictSame(await call('silent', {}), { status: 200, json: { result: null } }, 'undefined becomes null');
  });

  t.test('run() receives the injected context with the deadline as a Date', async (t) => {
    seen.length = 0;
    await call('echo', { text: 'hi' });
    const ctx = seen[0]!;
    t.equal(ctx.invocationId, context.invocationId);
    t.equal(ctx.callId, 't0-call1');
    t.equal(ctx.agent, 'planner');
    t.equal(ctx.idempotencyKey, context.idempotencyKey);
    t.ok(ctx.deadline instanceof Date, 'deadline is a Date');
    t.equal(ctx.deadline.toISOString(), '2030-01-02T03:04:05.000Z');
    t.equal(ctx.signal.aborted, false);
    t.type(ctx.log.info, 'function');
  });

  t.test(
    'arguments that fail the tool schema are refused with their paths and never reach run()',
    async (t) => {
      seen.length = 0;
      t.strictSame(await call('echo', { text: 5 }), {
        status: 400,
        json: {
          error: {
            code: 'invalid_input',
            message: 'Invalid arguments: /text: must be string',
            details: [{ path: '/text', message: 'must be string' }],
          },
        },
      });
      const missing = await call('echo', { txt: 'hi' });
      t.equal(missing.status, 400);
      t.strictSame(missing.json.error.details, [
        { path: '/text', message: "must have required property 'text'" },
        { path: '/txt', message: 'is not an allowed property' },
      ]);
      t.equal(
        (await call('echo', 'just text')).json.error.code,
        'invalid_input',
        'arguments must be an object',
      );
      const huge = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
      t.strictSame(
        (await call('echo', huge)).json.error.details,
        [{ path: '/text', message: "must have required property 'text'" }],
        'a big body stops at its first problem instead of listing 20,000',
      );
      t.equal(seen.length, 0);
    },
  );

  t.test('a request without its context is refused with invalid_input', async (t) => {
    const res = await call('echo', undefined, { args: { text: 'hi' } });
    t.equal(res.status, 400);
    t.equal(res.json.error.code, 'invalid_input');
    t.match(res.json.error.details, [{ path: '/context' }]);
  });

  t.test('an unknown tool answers 404 tool_not_found', async (t) => {
    t.strictSame(await call('nope', {}), {
      status: 404,
      json: { error: { code: 'tool_not_found', message: 'Tool nope does not exist.' } },
    });
  });

  t.test('a tool that throws answers 502 tool_failed with its message', async (t) => {
    t.strictSame(await call('boom', {}), {
      status: 502,
      json: { error: { code: 'tool_failed', message: 'disk on fire' } },
    });
  });

  t.test('a result that fails the output schema answers 502 tool_failed', async (t) => {
    t.strictSame(await call('counter', {}), { status: 200, json: { result: { n: 3 } } });
    t.strictSame(await call('counter', { bad: true }), {
      status: 502,
      json: {
        error: {
          code: 'tool_failed',
          message: 'the result does not match the output schema: /n: must be integer',
        },
      },
    });
  });

  t.test(
    'a tool slower than its timeoutMs answers 504 tool_timeout and sees its signal aborted',
    async (t) => {
      seen.length = 0;
      t.strictSame(await call('sleepy', {}), {
        status: 504,
        json: { error: { code: 'tool_timeout', message: 'no answer within 50 ms' } },
      });
      t.equal(seen[0]!.signal.aborted, true);
    },
  );

  t.test('a body that is not JSON is refused', async (t) => {
    const bad = await app.inject({
      method: 'POST',
      url: '/tools/echo/invoke',
      headers: { 'content-type': 'application/json' },
      payload: '{"args": ',
    });
    t.equal(bad.statusCode, 400);
    t.equal(bad.json().error.code, 'invalid_json');
    const text = await app.inject({
      method: 'POST',
      url: '/tools/echo/invoke',
      headers: { 'content-type': 'application/xml' },
      payload: '<args/>',
    });
    t.equal(text.statusCode, 415);
    t.equal(text.json().error.code, 'unsupported_media_type');
  });

  t.test(
    'over real HTTP a tool that takes a while answers, and a caller that goes away does not abort it',
    async (t) => {
      const server = buildToolHost({ tools: loadToolDefinitions(tools) });
      await server.listen({ port: 0, host: '127.0.0.1' });
      t.teardown(() => server.close());
      const dispatcher = new Agent();
      t.teardown(() => dispatcher.close());
      const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/tools/patient/invoke`;
      const post = (signal?: AbortSignal) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ args: {}, context }),
          dispatcher,
          ...(signal ? { signal } : {}),
        });
      const res = await post();
      t.equal(res.status, 200);
      t.strictSame(await res.json(), { result: 'done' });

      seen.length = 0;
      finished.length = 0;
      const abort = new AbortController();
      const gone = post(abort.signal).catch(() => 'gone');
      while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
      abort.abort();
      t.equal(await gone, 'gone');
      while (finished.length === 0) await new Promise((r) => setTimeout(r, 5));
      t.strictSame(finished, ['done'], 'the tool ran to its end: only a cancellation aborts it');
      t.equal(seen[0]!.signal.aborted, false);
    },
  );

  t.test('a body over the 8 MiB limit answers 413 payload_too_large', async (t) => {
    const res = await call('echo', undefined, { args: { text: 'x'.repeat(8 * 1024 * 1024) }, context });
    t.strictSame(res, {
      status: 413,
      json: { error: { code: 'payload_too_large', message: 'The request body is too large.' } },
    });
  });
});

// /readyz: ready while every mounted MCP server is up, else 503 naming each one that is down.
t.test('GET /readyz', async (t) => {
  const server = (outage?: object) =>
    ({ title: 'MCP server "files" (tools[1])', outageReport: () => outage }) as unknown as McpConnection;

  t.test('/readyz is ready while every MCP server is up, and open without the internal token', async (t) => {
    const app = buildToolHost({ tools: [], internalToken: 'secret', mcpServers: [server()] });
    t.teardown(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    t.equal(res.statusCode, 200);
    t.strictSame(res.json(), { status: 'ready' });
  });

  t.test('/readyz is 503 unavailable naming each MCP server that is down', async (t) => {
    const since = '2026-01-01T00:00:00.000Z';
    const app = buildToolHost({
      tools: [],
      mcpServers: [server({ path: 'tools[1]', server: 'files', state: 'restarting', since }), server()],
    });
    t.teardown(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    t.equal(res.statusCode, 503);
    t.strictSame(res.json(), {
      error: {
        code: 'unavailable',
        message: `Not ready: MCP server "files" (tools[1]) is down since ${since} (restarting).`,
        details: [
          { path: 'tools[1]', message: `MCP server "files" (tools[1]) is down since ${since} (restarting)` },
        ],
      },
    });
  });
});

// Only the invocation's cancellation aborts a running tool (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md): the flag in Redis,
// looked up when a broadcast on the cancel channel names any invocation of the same tree.
t.test('CancelWatch', async (t) => {
  const keys = keyLayout('mesh');
  const root = `inv_${'a'.repeat(32)}`;
  const childA = `${root}-${'1'.repeat(16)}`;
  const childB = `${root}-${'2'.repeat(16)}`;

  async function host(t: Test) {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    t.teardown(() => client.disconnect());
    const started: string[] = [];
    const ended: { key: string; aborted: boolean }[] = [];
    const gates = new Map<string, () => void>();
    const tools = loadToolDefinitions([
      {
        name: 'transfer',
        description: 'Moves money (not safe to repeat); waits until the test lets it finish.',
        input: { type: 'object' },
        run: async (_args, ctx) => {
          started.push(ctx.idempotencyKey);
          await new Promise<void>((resolve) => {
            gates.set(ctx.idempotencyKey, resolve);
            ctx.signal.addEventListener('abort', () => resolve());
          });
          ended.push({ key: ctx.idempotencyKey, aborted: ctx.signal.aborted });
          return `transferred for ${ctx.invocationId}`;
        },
      },
    ]);
    const outcomes = new OutcomeStore(client, keys, 3600, 1000);
    const app = buildToolHost({ tools, outcomes });
    t.teardown(() => app.close());
    await app.ready();
    for (const id of [root, childA, childB]) {
      await client.hset(keys.invocation(root, id), 'status', id === root ? 'waiting' : 'running');
    }
    const call = (invocationId: string) =>
      app.inject({
        method: 'POST',
        url: '/tools/transfer/invoke',
        payload: {
          args: {},
          context: {
            invocationId,
            callId: 't0-call0',
            agent: 'a',
            deadline: new Date(Date.now() + 60_000).toISOString(),
            idempotencyKey: `${invocationId}/t0-call0`,
          },
        },
      });
    /** What the gateway's cancel does: flag the invocation (CANCEL_TREE), then broadcast an id. */
    const cancel = async (flag: string | undefined, broadcast: string) => {
      if (flag) await client.hset(keys.invocation(root, flag), 'cancelRequested', '1');
      await client.publish(keys.cancelChannel(), broadcast);
    };
    const running = (n: number) =>
      waitUntil(
        async () => started.length === n,
        10_000,
        () => `${n} runs`,
      );
    return { call, cancel, running, started, ended, gates, client, outcomes };
  }

  t.test(
    "a cancelled invocation's running tool is aborted, even by its ancestor's broadcast, and its key is left in doubt",
    async (t) => {
      const h = await host(t);
      const first = h.call(childA);
      await h.running(1);
      await h.cancel(childA, root);
      const res = await first;
      t.equal(res.statusCode, 409);
      t.strictSame(res.json(), { error: { code: 'cancelled', message: 'The invocation was cancelled.' } });
      t.strictSame(
        h.ended,
        [{ key: `${childA}/t0-call0`, aborted: true }],
        'the tool saw its signal aborted',
      );
      const key = `${childA}/t0-call0`;
      t.equal(await h.client.exists(keys.toolLease(key)), 0, 'the lease was abandoned');
      const admission = await h.outcomes.admit(key, { tool: 'transfer', argsHash: argsHash({}) }, false);
      t.equal(admission.kind, 'in_doubt', 'the key is in doubt: a repeat would not run the tool');
      t.equal(h.started.length, 1, 'the tool ran once');
    },
  );

  t.test('a broadcast aborts only the calls whose own invocation is flagged', async (t) => {
    const h = await host(t);
    const a = h.call(childA);
    const b = h.call(childB);
    await h.running(2);
    await h.cancel(undefined, root); // nothing flagged: a sibling's or a finished invocation's broadcast
    await h.cancel(childB, childB);
    t.equal((await b).json().error.code, 'cancelled', 'the flagged call is aborted');
    t.strictSame(h.ended, [{ key: `${childB}/t0-call0`, aborted: true }], 'the other call still runs');
    h.gates.get(`${childA}/t0-call0`)!();
    const done = await a;
    t.equal(done.statusCode, 200);
    t.strictSame(done.json(), { result: `transferred for ${childA}` });
  });

  t.test(
    'a call of an invocation cancelled before it arrives never runs and leaves its key free',
    async (t) => {
      const h = await host(t);
      await h.client.hset(keys.invocation(root, childA), 'cancelRequested', '1');
      const res = await h.call(childA);
      t.equal(res.statusCode, 409);
      t.equal(res.json().error.code, 'cancelled');
      t.equal(h.started.length, 0, 'the tool did not run');
      t.equal(await h.client.exists(keys.toolOutcome(`${childA}/t0-call0`)), 0, 'nothing recorded');
    },
  );
});

// With tracing on, every line of a call carries its trace: fastify's own request lines the caller's
// span (from the call's traceparent), the tool's lines the tool-host's execute_tool span.
t.test('callerTrace', async (t) => {
  // One provider for these tests, as the process has one; no span is exported anywhere. At their end
  // it is shut down and the OpenTelemetry API's globals it registered (tracer provider, context
  // manager, propagator) are given back: a host built after them is untraced, as in a process of its
  // own, and a later start in this process could register its own provider.
  const tracing = await startTracingWith([]);
  t.teardown(async () => {
    await tracing.shutdown();
    otel.trace.disable();
    otel.context.disable();
    otel.propagation.disable();
  });

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
      t.equal(
        (await app.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body })).statusCode,
        200,
      );
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
});

t.test('a connection that has sent nothing does not hold the close', async (t) => {
  const app = buildToolHost({ tools: loadToolDefinitions([]) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { closed } = await stalledConnection((app.server.address() as AddressInfo).port);
  // Node stops timing headers once its server closes, and would wait for the client.
  const took = await within(app.close(), 5000);
  t.ok(took < 5000, `closed in ${took} ms`);
  await within(closed, 1000);
});

t.test('a request whose body stops short is answered 408 request_timeout and closed', async (t) => {
  // fastify's default is no request timeout: the connection was held as long as its client wanted.
  const app = buildToolHost({
    tools: loadToolDefinitions([]),
    arrival: { headersTimeoutMs: 300, requestTimeoutMs: 600 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const head =
    'POST /tools/ping/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{';
  const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  let answer = '';
  socket.on('data', (d) => (answer += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  await within(closed, 5000);
  t.match(answer, /^HTTP\/1\.1 408 /, 'answered 408');
  t.match(answer, /"code":"request_timeout"/, 'in the error contract');
});
