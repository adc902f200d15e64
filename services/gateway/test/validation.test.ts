// What the gateway refuses before anything runs (docs/reference/rest-api.md): bad `wait`, bodies that fail the
// agent's input schema (never coerced, defaulted or stripped), bad JSON, other media types, big
// bodies, unknown agents; and every error body has exactly the shape {"error": {code, message, details?}}.
// No runner: an accepted request leaves its job queued, and a refused one leaves none.
import t, { type Test } from 'tap';
import { startGateway } from './support/gateway.js';

const mesh = await startGateway(t, {
  agentsYaml: `
  chat:
    description: Chats.
    instructions: "@agent chat"
  open:
    description: Takes any object.
    instructions: "@agent open"
    input: {type: object, properties: {n: {type: integer, default: 3}, s: {type: string}}}
`,
});
const app = mesh.app;
const raw = async (url: string, contentType: string, payload: string, method: 'POST' | 'GET' = 'POST') => {
  const res = await app.inject({ method, url, headers: { 'content-type': contentType }, payload });
  return { status: res.statusCode, json: res.json() };
};

/** Asserts the status and that the body is exactly `{"error": {code, message, details?}}`, without internals. */
function refused(t: Test, res: { status: number; json: unknown }, status: number, code: string) {
  t.equal(res.status, status, `${code} is ${status}`);
  const body = res.json as { error: Record<string, unknown> };
  t.strictSame(Object.keys(body), ['error'], 'the body holds only error');
  t.equal(body.error.code, code);
  t.type(body.error.message, 'string');
  const extra = Object.keys(body.error).filter((k) => !['code', 'message', 'details'].includes(k));
  t.strictSame(extra, [], 'error holds only code, message and details');
  for (const d of (body.error.details as object[] | undefined) ?? []) {
    t.strictSame(Object.keys(d).sort(), ['message', 'path'], 'a detail is {path, message}');
  }
  t.notMatch(
    JSON.stringify(body),
    /\bat \S+:\d+|node_modules|\.ts\b|stack|statusCode|FST_/,
    'no stack or internals',
  );
}

t.test('wait outside 0–300 or not a number is refused with invalid_input at /wait', async (t) => {
  for (const wait of ['301', '300.5', '-1', 'abc', '', '1e2', 'Infinity', 'NaN']) {
    const res = await mesh.invoke('chat', { prompt: 'hi' }, `wait=${wait}`);
    refused(t, res, 400, 'invalid_input');
    t.equal(res.json.error.details[0].path, '/wait', `wait=${wait}`);
  }
  const twice = await mesh.invoke('chat', { prompt: 'hi' }, 'wait=1&wait=2');
  refused(t, twice, 400, 'invalid_input');
});

t.test('a timeout of zero or not a number is refused with invalid_input at /timeout', async (t) => {
  for (const timeout of ['0', 'soon', '-5']) {
    const res = await mesh.invoke('chat', { prompt: 'hi' }, `timeout=${timeout}`);
    refused(t, res, 400, 'invalid_input');
    t.equal(res.json.error.details[0].path, '/timeout', `timeout=${timeout}`);
  }
});

t.test('a missing prompt is refused with invalid_input at /prompt', async (t) => {
  const res = await mesh.invoke('chat', {});
  refused(t, res, 400, 'invalid_input');
  t.strictSame(res.json, {
    error: {
      code: 'invalid_input',
      message: "Invalid body: body/prompt: must have required property 'prompt'",
      details: [{ path: '/prompt', message: "must have required property 'prompt'" }],
    },
  });
});

t.test('a number is never coerced into the prompt string', async (t) => {
  const res = await mesh.invoke('chat', { prompt: 5 });
  refused(t, res, 400, 'invalid_input');
  t.strictSame(res.json.error.details, [{ path: '/prompt', message: 'must be string' }]);
  t.equal(res.json.error.message, 'Invalid body: body/prompt: must be string');
  const bool = await mesh.invoke('chat', { prompt: true });
  t.strictSame(bool.json.error.details, [{ path: '/prompt', message: 'must be string' }]);
});

t.test('a body that is not an object, or has fields the schema forbids, is refused', async (t) => {
  for (const body of [['hi'], 'hi', null, 42]) {
    const res = await raw('/agents/chat/invoke', 'application/json', JSON.stringify(body));
    refused(t, res, 400, 'invalid_input');
  }
  const extra = await mesh.invoke('chat', { prompt: 'hi', temperature: 2 });
  refused(t, extra, 400, 'invalid_input');
  t.strictSame(
    extra.json.error,
    {
      code: 'invalid_input',
      message: 'Invalid body: body/temperature: is not an allowed property',
      details: [{ path: '/temperature', message: 'is not an allowed property' }],
    },
    'the property the schema forbids is named, at its own path',
  );
});

t.test(
  'no default is filled in, no string is turned into an integer, no extra field is stripped',
  async (t) => {
    const res = await mesh.invoke('open', { s: 'x', extra: { deep: [1, '2'] } }, 'wait=0');
    t.equal(res.status, 202);
    t.strictSame(res.json.input, { s: 'x', extra: { deep: [1, '2'] } }, 'the input is kept exactly as sent');
    const stored = await mesh.get(`/invocations/${res.json.id}`);
    t.strictSame(stored.json.input, { s: 'x', extra: { deep: [1, '2'] } });
    const coerced = await mesh.invoke('open', { n: '5' }, 'wait=0');
    refused(t, coerced, 400, 'invalid_input');
    t.strictSame(coerced.json.error.details, [{ path: '/n', message: 'must be integer' }]);
  },
);

t.test('a malformed JSON body is refused with invalid_json', async (t) => {
  for (const payload of ['{"prompt": ', '{prompt: "hi"}', '', '{"prompt": "hi"} trailing']) {
    const res = await raw('/agents/chat/invoke', 'application/json', payload);
    refused(t, res, 400, 'invalid_json');
    t.strictSame(res.json, {
      error: { code: 'invalid_json', message: 'The request body is not valid JSON.' },
    });
  }
});

t.test('a body that is not application/json is refused with 415 unsupported_media_type', async (t) => {
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data',
  ]) {
    const res = await raw('/agents/chat/invoke', type, 'prompt=hi');
    refused(t, res, 415, 'unsupported_media_type');
    t.strictSame(
      res.json,
      { error: { code: 'unsupported_media_type', message: 'Only application/json bodies are accepted.' } },
      type,
    );
  }
  const charset = await raw(
    '/agents/chat/invoke?wait=0',
    'application/json; charset=utf-8',
    '{"prompt":"hi"}',
  );
  t.equal(charset.status, 202, 'application/json with a charset is JSON');
});

t.test('a body over 1 MiB is refused with 413 payload_too_large', async (t) => {
  const res = await mesh.invoke('chat', { prompt: 'x'.repeat(1024 * 1024) });
  refused(t, res, 413, 'payload_too_large');
  t.strictSame(res.json, { error: { code: 'payload_too_large', message: 'The request body is too large.' } });
});

t.test('an unknown agent is 404 agent_not_found naming the known agents (invoke, GET)', async (t) => {
  const invoke = await mesh.invoke('ghost', { prompt: 'hi' });
  refused(t, invoke, 404, 'agent_not_found');
  const message = 'No agent is named ghost (agents: chat, open).';
  t.strictSame(invoke.json, { error: { code: 'agent_not_found', message } }, 'the known agents are listed');
  const get = await mesh.get('/agents/ghost');
  refused(t, get, 404, 'agent_not_found');
  t.strictSame(get.json, { error: { code: 'agent_not_found', message } });
});

t.test('names of Object.prototype are no agents', async (t) => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    refused(t, await mesh.get(`/agents/${name}`), 404, 'agent_not_found');
    refused(t, await mesh.invoke(name, { prompt: 'hi' }), 404, 'agent_not_found');
  }
});

t.test('an unknown route answers 404 not_found in the same error shape', async (t) => {
  const res = await mesh.get('/nowhere');
  refused(t, res, 404, 'not_found');
  t.strictSame(res.json, { error: { code: 'not_found', message: 'Route GET /nowhere not found.' } });
});

t.test('no refused request left a job for a runner', async (t) => {
  t.equal(await mesh.queued('chat'), 1, 'only the application/json request with a charset queued chat');
  t.equal(await mesh.queued('open'), 1, 'only the input kept exactly as sent queued open');
});
