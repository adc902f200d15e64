// GET /tools and POST /tools/{name}/invoke through buildToolHost: what the runner (and so the
// model) observes of listing, validation, context injection, failures and timeouts.
import type { AddressInfo } from 'node:net';
import type { ToolDefinition, ToolRunContext } from '@agentmesh/shared';
import t from 'tap';
import { Agent, fetch } from 'undici';
import { buildToolHost, loadToolDefinitions } from '../src/index.js';

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

t.test('a tool slower than its timeoutMs answers 504 tool_timeout and sees its signal aborted', async (t) => {
  seen.length = 0;
  t.strictSame(await call('sleepy', {}), {
    status: 504,
    json: { error: { code: 'tool_timeout', message: 'no answer within 50 ms' } },
  });
  t.equal(seen[0]!.signal.aborted, true);
});

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
