// The runner's model client (src/loop/model/): how an HTTP failure is classified (retryable or
// not, retry-after), how a JSON completion is parsed into a reply, and OpenAIChatModel against the
// scripted OpenAI-compatible fake. Streamed replies are model-streamed-reply.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Callable, type ChatMessage, MeshError, type ModelConfig } from '@agentmesh/shared';
import { type FakeScript, startFakeModel } from '@agentmesh/test-support/fake-model';
import { freePort } from '@agentmesh/test-support/redis-server';
import t from 'tap';
import { classifyHttpError, isRetryableStatus, retryAfterMs } from '../src/loop/model/classify-http-error.js';
import { OpenAIChatModel, type RetryPolicy } from '../src/loop/model/openai-chat-model.js';
import { parseChatCompletion } from '../src/loop/model/parse-chat-completion.js';

// classifyHttpError, isRetryableStatus and retryAfterMs: which refusals of the model endpoint are
// retried, how long retry-after says to wait, and the coded error a failure becomes.
t.test('classifyHttpError', async (t) => {
  t.test(
    'timeouts, conflicts, rate limits and server errors are retryable; other refusals are not',
    async (t) => {
      t.strictSame([408, 409, 429, 500, 502, 503, 504].map(isRetryableStatus), [
        true,
        true,
        true,
        true,
        true,
        true,
        true,
      ]);
      t.strictSame([400, 401, 403, 404, 413, 422].map(isRetryableStatus), [
        false,
        false,
        false,
        false,
        false,
        false,
      ]);
    },
  );

  t.test('retry-after is read as seconds or as an HTTP date', async (t) => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    t.equal(retryAfterMs('0', now), 0);
    t.equal(retryAfterMs('2', now), 2000);
    t.equal(retryAfterMs('0.5', now), 500);
    t.equal(retryAfterMs(['3', '9'], now), 3000);
    t.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:07 GMT', now), 7000);
    t.equal(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past means now');
    t.equal(retryAfterMs(undefined, now), undefined);
    t.equal(retryAfterMs('soon', now), undefined);
  });

  t.test('an HTTP failure becomes a coded error with the provider message', async (t) => {
    const limited = classifyHttpError(429, JSON.stringify({ error: { message: 'Rate limit reached' } }));
    t.equal(limited.code, 'model_unavailable');
    t.equal(limited.retryable, true);
    t.equal(limited.message, 'The model endpoint answered 429: Rate limit reached');
    const refused = classifyHttpError(
      401,
      JSON.stringify({ error: { message: 'Incorrect API key provided' } }),
    );
    t.equal(refused.code, 'model_error');
    t.equal(refused.retryable, false);
    t.equal(refused.message, 'The model endpoint answered 401: Incorrect API key provided');
  });

  t.test('a body that is not JSON is quoted raw, cut at 500 characters', async (t) => {
    t.equal(classifyHttpError(502, 'Bad Gateway').message, 'The model endpoint answered 502: Bad Gateway');
    t.equal(
      classifyHttpError(500, 'x'.repeat(2000)).message,
      `The model endpoint answered 500: ${'x'.repeat(500)}`,
    );
  });
});

// parseChatCompletion: a JSON chat completion as the runner's reply (content, tool calls, usage),
// and each malformed shape refused as invalid_model_reply.
t.test('parseChatCompletion', async (t) => {
  const reply = (message: unknown, extra: object = {}) =>
    JSON.stringify({ choices: [{ message }], ...extra });
  const refusal = (text: string): MeshError => {
    try {
      parseChatCompletion(text);
    } catch (e) {
      if (e instanceof MeshError) return e;
      throw e;
    }
    throw new Error('expected the reply to be refused');
  };

  t.test('a text answer becomes content with no tool calls and its token usage', async (t) => {
    const text = reply(
      { role: 'assistant', content: 'The answer is 42.' },
      { usage: { prompt_tokens: 12, completion_tokens: 5 } },
    );
    t.strictSame(parseChatCompletion(text), {
      content: 'The answer is 42.',
      toolCalls: [],
      usage: { promptTokens: 12, completionTokens: 5 },
    });
  });

  t.test('tool calls keep their id, name and the raw argument text as the model wrote it', async (t) => {
    const raw = '{ "path": "a.txt",  "lines": [1, 2] }';
    const parsed = parseChatCompletion(
      reply({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_A', type: 'function', function: { name: 'read_file', arguments: raw } },
          { id: 'call_B', type: 'function', function: { name: 'broken', arguments: '{"path": ' } },
        ],
      }),
    );
    t.strictSame(parsed.toolCalls, [
      { id: 'call_A', name: 'read_file', arguments: raw },
      { id: 'call_B', name: 'broken', arguments: '{"path": ' },
    ]);
    t.equal(parsed.content, null);
  });

  t.test('object arguments are accepted and stringified; absent ones become {}', async (t) => {
    const parsed = parseChatCompletion(
      reply({
        content: null,
        tool_calls: [
          { function: { name: 'lookup', arguments: { word: 'mesh', n: 2 } } },
          { function: { name: 'ping' } },
        ],
      }),
    );
    t.strictSame(parsed.toolCalls, [
      { id: '', name: 'lookup', arguments: '{"word":"mesh","n":2}' },
      { id: '', name: 'ping', arguments: '{}' },
    ]);
  });

  t.test('missing or non-numeric usage counts as zero tokens', async (t) => {
    t.strictSame(parseChatCompletion(reply({ content: 'x' })).usage, {
      promptTokens: 0,
      completionTokens: 0,
    });
    const odd = reply({ content: 'x' }, { usage: { prompt_tokens: '9', completion_tokens: 3.7 } });
    t.strictSame(parseChatCompletion(odd).usage, { promptTokens: 0, completionTokens: 3 });
  });

  t.test('a reply that is not JSON is refused', async (t) => {
    const e = refusal('<html>Bad Gateway</html>');
    t.equal(e.code, 'invalid_model_reply');
    t.equal(e.message, 'The model reply is malformed: not JSON');
  });

  t.test('a reply without choices is refused', async (t) => {
    for (const text of [
      '{}',
      '{"choices":[]}',
      '{"choices":[{}]}',
      'null',
      '{"choices":[{"message":"hi"}]}',
    ]) {
      const e = refusal(text);
      t.equal(e.code, 'invalid_model_reply', text);
      t.equal(e.message, 'The model reply is malformed: no choices[0].message', text);
    }
  });

  t.test('content that is not a string is refused', async (t) => {
    for (const content of [42, ['a'], { text: 'a' }, true]) {
      const e = refusal(reply({ content }));
      t.equal(e.code, 'invalid_model_reply');
      t.equal(e.message, 'The model reply is malformed: choices[0].message.content is not a string');
    }
  });

  t.test('a tool call without a name is refused, naming the call', async (t) => {
    const calls = [{ function: { name: 'ok', arguments: '{}' } }, { id: 'x', function: { arguments: '{}' } }];
    const e = refusal(reply({ content: null, tool_calls: calls }));
    t.equal(e.code, 'invalid_model_reply');
    t.equal(e.message, 'The model reply is malformed: choices[0].message.tool_calls[1].function.name');
    t.equal(
      refusal(reply({ content: null, tool_calls: [{ function: { name: '' } }] })).code,
      'invalid_model_reply',
    );
    t.equal(refusal(reply({ content: null, tool_calls: [null] })).code, 'invalid_model_reply');
  });

  t.test('tool_calls that are not a list are refused', async (t) => {
    for (const tool_calls of [{ function: { name: 'x' } }, 'read_file', 3]) {
      const e = refusal(reply({ content: null, tool_calls }));
      t.equal(e.code, 'invalid_model_reply');
      t.equal(e.message, 'The model reply is malformed: choices[0].message.tool_calls is not a list');
    }
  });

  t.test('a null tool_calls is an answer without tool calls', async (t) => {
    t.strictSame(parseChatCompletion(reply({ content: 'done', tool_calls: null })).toolCalls, []);
  });

  t.test(
    'object arguments nested too deeply to stringify make the reply malformed, not a crash',
    async (t) => {
      const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
      const text = `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"a","function":{"name":"x","arguments":${deep}}}]}}]}`;
      const e = refusal(text);
      t.equal(e.code, 'invalid_model_reply');
      t.equal(
        e.message,
        'The model reply is malformed: choices[0].message.tool_calls[0].function.arguments nest too deeply',
      );
    },
  );
});

// OpenAIChatModel against the scripted OpenAI-compatible fake: what it sends, which answers it
// retries (408/409/429/5xx, honouring retry-after) and which it never retries, within the deadline.
t.test('OpenAIChatModel', async (t) => {
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
    t.match(
      (e.cause as Error).message,
      /ECONNREFUSED/,
      'the network error is kept as the cause, for the log',
    );
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
    const e = await failure(
      ask(new OpenAIChatModel(config(), undefined, fast), { deadline: Date.now() - 1 }),
    );
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

  t.test(
    'a reply body past the byte cap fails at once with invalid_model_reply, never retried',
    async (t) => {
      const cap = 4096;
      script([{ raw: completion('x'.repeat(cap)) }]);
      const e = await failure(ask(new OpenAIChatModel(config(), undefined, fast, cap)));
      t.equal(e.code, 'invalid_model_reply');
      t.equal(e.message, `The model reply exceeds ${cap} bytes.`);
      t.equal(fake.requests.length, 1, 'the same prompt is not sent again');
    },
  );

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
    const model = new OpenAIChatModel(
      config({ baseUrl: `http://127.0.0.1:${port}/v1` }),
      undefined,
      fast,
      cap,
    );
    const e = await failure(ask(model));
    t.equal(e.code, 'invalid_model_reply');
    t.equal(e.message, `The model reply exceeds ${cap} bytes.`);
    while (!closed) await new Promise((r) => setTimeout(r, 5));
    t.ok(written < 64 * cap, 'the connection was closed, not read to its end');
  });
});
