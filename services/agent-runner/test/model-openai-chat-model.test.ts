// OpenAIChatModel against the scripted OpenAI-compatible fake: what it sends, which answers it
// retries (408/409/429/5xx, honouring retry-after) and which it never retries, within the deadline.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Callable, type ChatMessage, MeshError, type ModelConfig } from '@agentmesh/shared';
import { type FakeScript, startFakeModel } from '@agentmesh/test-support/fake-model';
import { freePort } from '@agentmesh/test-support/redis-server';
import t from 'tap';
import { OpenAIChatModel, type RetryPolicy } from '../src/loop/model/openai-chat-model.js';

const fast: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
const messages: ChatMessage[] = [
  { role: 'system', content: '@agent tester' },
  { role: 'user', content: 'hello' },
];
const lookup: Callable = {
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};

const fake = await startFakeModel();
t.teardown(() => fake.close());
const config = (over: Partial<ModelConfig> = {}): ModelConfig => ({
  provider: 'openai',
  baseUrl: fake.url,
  apiKey: 'sk-test',
  model: 'fake-1',
  ...over,
});
/** Scripts the fake with `first` for the first requests, then a final answer; clears what it recorded. */
type Reply = ReturnType<FakeScript>;
const script = (first: Reply[], then: Reply = { final: 'ok' }) => {
  fake.requests.length = 0;
  const s: FakeScript = (r) => first[r.n - 1] ?? then;
  fake.setScript(s);
};
const ask = (model: OpenAIChatModel, over: { signal?: AbortSignal; deadline?: number } = {}) =>
  model.complete({
    messages,
    tools: [],
    signal: over.signal ?? new AbortController().signal,
    deadline: over.deadline ?? Date.now() + 60_000,
  });
const failure = async (p: Promise<unknown>): Promise<MeshError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeshError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
};

t.test('the request carries the model name, the messages, the tools and the API key', async (t) => {
  const seen: { body: unknown; headers: http.IncomingHttpHeaders; url: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      seen.push({ body: JSON.parse(text), headers: req.headers, url: req.url });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'hi' } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  const model = new OpenAIChatModel(config({ baseUrl: `http://127.0.0.1:${port}/v1/` }), undefined, fast);
  const signal = new AbortController().signal;
  await model.complete({ messages, tools: [lookup], signal, deadline: Date.now() + 10_000 });
  await model.complete({ messages, tools: [], signal, deadline: Date.now() + 10_000 });
  const plain = new OpenAIChatModel(
    config({ baseUrl: `http://127.0.0.1:${port}/v1/`, stream: false }),
    undefined,
    fast,
  );
  await plain.complete({ messages, tools: [], signal, deadline: Date.now() + 10_000 });
  t.equal(seen[0]!.url, '/v1/chat/completions');
  t.equal(seen[0]!.headers.authorization, 'Bearer sk-test');
  t.match(seen[0]!.headers['content-type'], /^application\/json/);
  const streamed = { stream: true, stream_options: { include_usage: true } };
  t.strictSame(seen[0]!.body, {
    model: 'fake-1',
    messages,
    tools: [{ type: 'function', function: lookup }],
    ...streamed,
  });
  t.strictSame(
    seen[1]!.body,
    { model: 'fake-1', messages, ...streamed },
    'no tools key when there is nothing to call',
  );
  t.strictSame(
    seen[2]!.body,
    { model: 'fake-1', messages },
    'an entry with stream: false asks for no stream',
  );
});

t.test('a model without an API key sends no Authorization header', async (t) => {
  script([]);
  await ask(new OpenAIChatModel(config({ apiKey: '' }), undefined, fast));
  t.equal(fake.requests[0]!.authorization, undefined);
});

t.test('the reply comes back as content, tool calls and token usage', async (t) => {
  script([{ calls: [{ name: 'lookup', args: { word: 'mesh' } }], content: 'let me see' }]);
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast));
  t.strictSame(reply, {
    content: 'let me see',
    toolCalls: [{ id: 'call_1_0', name: 'lookup', arguments: '{"word":"mesh"}' }],
    usage: { promptTokens: 11, completionTokens: 7 },
  });
});

t.test('a 429 is retried as often as it comes, honouring retry-after', async (t) => {
  script([
    { status: 429, retryAfter: '0' },
    { status: 429, retryAfter: '0' },
  ]);
  // Backoff alone would wait a minute; only retry-after: 0 lets this finish at once.
  const slowBackoff: RetryPolicy = { maxAttempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 };
  const reply = await ask(new OpenAIChatModel(config(), undefined, slowBackoff));
  t.equal(reply.content, 'ok');
  t.equal(fake.requests.length, 3);
});

t.test('408, 409, 500 and 503 are retried', async (t) => {
  for (const status of [408, 409, 500, 503]) {
    script([{ status }]);
    const reply = await ask(new OpenAIChatModel(config(), undefined, fast));
    t.equal(reply.content, 'ok', `after a ${status}`);
    t.equal(fake.requests.length, 2, `${status} costs exactly one retry`);
  }
});

t.test('400, 401 and 404 are never retried and fail with model_error', async (t) => {
  for (const status of [400, 401, 404]) {
    script([{ status, body: { error: { message: `refused with ${status}` } } }]);
    const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
    t.equal(e.code, 'model_error');
    t.equal(e.message, `The model endpoint answered ${status}: refused with ${status}`);
    t.equal(fake.requests.length, 1, `a ${status} is sent once`);
  }
});

t.test('an endpoint that keeps failing is given up after maxAttempts with model_unavailable', async (t) => {
  script([], { status: 503 });
  const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
  t.equal(e.code, 'model_unavailable');
  t.equal(e.message, 'The model endpoint answered 503: scripted 503');
  t.equal(fake.requests.length, 3);
});

t.test('an endpoint nobody listens on is given up after maxAttempts with model_unavailable', async (t) => {
  const port = await freePort();
  const model = new OpenAIChatModel(config({ baseUrl: `http://127.0.0.1:${port}/v1` }), undefined, fast);
  const e = await failure(ask(model));
  t.equal(e.code, 'model_unavailable');
  t.equal(e.message, 'The model endpoint did not answer.', 'no address, no ECONNREFUSED');
  t.match((e.cause as Error).message, /ECONNREFUSED/, 'the network error is kept as the cause, for the log');
});

t.test('a malformed 200 reply fails at once with invalid_model_reply', async (t) => {
  script([{ status: 200, body: { choices: [] } }]);
  const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
  t.equal(e.code, 'invalid_model_reply');
  t.equal(e.message, 'The model reply is malformed: no choices[0].message');
  t.equal(fake.requests.length, 1);
});

t.test('a deadline already past sends nothing and fails with deadline_exceeded', async (t) => {
  script([]);
  const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast), { deadline: Date.now() - 1 }));
  t.equal(e.code, 'deadline_exceeded');
  t.equal(fake.requests.length, 0);
});

t.test('a retry-after that reaches past the deadline stops retrying with deadline_exceeded', async (t) => {
  script([{ status: 429, retryAfter: '30' }]);
  const e = await failure(
    ask(new OpenAIChatModel(config(), undefined, fast), { deadline: Date.now() + 5000 }),
  );
  t.equal(e.code, 'deadline_exceeded');
  t.equal(e.message, 'The invocation ran past its deadline while retrying the model.');
  t.equal(fake.requests.length, 1);
});

t.test('a model still silent at the deadline is cut off with deadline_exceeded', async (t) => {
  script([{ final: 'too late', latencyMs: 10_000 }]);
  const e = await failure(
    ask(new OpenAIChatModel(config(), undefined, fast), { deadline: Date.now() + 300 }),
  );
  t.equal(e.code, 'deadline_exceeded');
  t.equal(fake.requests.length, 1, 'no retry past the deadline');
  while (!fake.requests[0]!.aborted) await new Promise((r) => setTimeout(r, 5));
  t.pass('the request in flight was aborted');
});

t.test('an abort stops the request in flight with the abort reason', async (t) => {
  script([{ final: 'too late', latencyMs: 10_000 }]);
  const abort = new AbortController();
  const pending = ask(new OpenAIChatModel(config(), undefined, fast), { signal: abort.signal });
  while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  abort.abort(new MeshError('cancelled', 'stopped by the test'));
  const e = await failure(pending);
  t.equal(e.code, 'cancelled');
  t.equal(e.message, 'stopped by the test');
  while (!fake.requests[0]!.aborted) await new Promise((r) => setTimeout(r, 5));
  t.equal(fake.requests.length, 1, 'the model saw one request, and its connection was closed');
});

t.test('an abort during a retry wait stops at once without another request', async (t) => {
  script([{ status: 503, retryAfter: '30' }]);
  const abort = new AbortController();
  const pending = ask(new OpenAIChatModel(config(), undefined, fast), { signal: abort.signal });
  while (fake.requests[0]?.doneAt === undefined) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  abort.abort(new MeshError('cancelled', 'stopped while waiting'));
  const e = await failure(pending);
  t.equal(e.code, 'cancelled');
  t.equal(fake.requests.length, 1);
});

t.test('a signal aborted before the call sends nothing', async (t) => {
  script([]);
  const abort = new AbortController();
  abort.abort(new MeshError('cancelled', 'already cancelled'));
  const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast), { signal: abort.signal }));
  t.equal(e.code, 'cancelled');
  t.equal(fake.requests.length, 0);
});

/** A completion whose content is `content`, as a body text. */
const completion = (content: string) =>
  JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] });

t.test('a reply body past the byte cap fails at once with invalid_model_reply, never retried', async (t) => {
  const cap = 4096;
  script([{ raw: completion('x'.repeat(cap)) }]);
  const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast, cap)));
  t.equal(e.code, 'invalid_model_reply');
  t.equal(e.message, `The model reply exceeds ${cap} bytes.`);
  t.equal(fake.requests.length, 1, 'the same prompt is not sent again');
});

t.test('a reply of exactly the byte cap is read whole', async (t) => {
  const body = completion('y'.repeat(3000));
  script([{ raw: body }]);
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast, Buffer.byteLength(body)));
  t.equal(reply.content, 'y'.repeat(3000));
});

t.test('a chunked reply without content-length is cut off once its bytes pass the cap', async (t) => {
  let written = 0;
  let closed = false;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"choices":[{"message":{"role":"assistant","content":"');
    // An endless body: only the client hanging up stops it.
    const pump = () => {
      if (res.destroyed) return;
      written += 65536;
      if (res.write('z'.repeat(65536))) setImmediate(pump);
      else res.once('drain', pump);
    };
    res.on('close', () => (closed = true));
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  const cap = 1024 * 1024;
  const model = new OpenAIChatModel(config({ baseUrl: `http://127.0.0.1:${port}/v1` }), undefined, fast, cap);
  const e = await failure(ask(model));
  t.equal(e.code, 'invalid_model_reply');
  t.equal(e.message, `The model reply exceeds ${cap} bytes.`);
  while (!closed) await new Promise((r) => setTimeout(r, 5));
  t.ok(written < 64 * cap, 'the connection was closed, not read to its end');
});
