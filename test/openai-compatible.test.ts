// Agents as OpenAI-compatible models (issue 26, docs/guides/openai-compatible.md): the official
// `openai` client lists them, completes with and without streaming, sends history and system
// messages, and meets every refusal in OpenAI's error shape with the mesh's code — through the real
// gateway, runner and tool-host against the fake model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout } from '@agentmesh/shared';
import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { type FakeScript, type SeenRequest, turnOf } from './support/fake-model.js';
import { listen, listenGateway, startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { waitUntil } from './support/wait-until.js';

const coderFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'openai-compat-')), 'coder.mjs');
fs.writeFileSync(coderFile, "export default { async run(input) { return 'hi ' + input.name; } };\n");

const agentsYaml = `
  chat: {description: Chats., instructions: "@agent chat"}
  quiz:
    description: Answers a question with a number.
    instructions: "@agent quiz"
    input: {type: object, properties: {question: {type: string}}, required: [question], additionalProperties: false}
    output: {type: object, properties: {answer: {type: string}, n: {type: integer}}, required: [answer, n]}
  coder:
    module: '${coderFile}'
    input: {type: object, properties: {name: {type: string}}, required: [name]}
  guard: {instructions: "@agent guard", subagents: [deployer], approvals: [_subagent_deployer]}
  deployer: {instructions: "@agent deployer"}
  broken: {instructions: "@agent broken"}
`;
const AGENTS = ['chat', 'quiz', 'coder', 'guard', 'deployer', 'broken'];

const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;
const roles = (r: SeenRequest) => r.messages.map((m) => `${m.role}:${m.content}`);
const script: FakeScript = (r) => {
  switch (r.agent) {
    case 'quiz':
      return { final: JSON.stringify({ answer: 'four', n: 4 }) };
    case 'guard':
      return turnOf(r) === 0
        ? { calls: [{ name: '_subagent_deployer', args: { prompt: 'deploy' } }] }
        : { final: 'hello world' };
    case 'broken':
      return { status: 400 };
    default:
      // A `slow:` prompt is answered after a while, so a repeat of it comes while it runs.
      return { final: `answer to ${lastUser(r)}`, latencyMs: lastUser(r).startsWith('slow:') ? 500 : 0 };
  }
};

const mesh = await startMesh(t, {
  agentsYaml,
  script,
  apiKeys: 'all-key,chat-key=chat',
  headers: { authorization: 'Bearer all-key' },
});
const base = await listen(mesh);
const client = (apiKey = 'all-key') => new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
const openai = client();

/** The error the client threw: status and OpenAI's body (`{message, type, code}`). */
async function refusal(p: Promise<unknown>): Promise<{ status: number | undefined; error: unknown }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof APIError) return { status: e.status, error: e.error };
    throw e;
  }
  throw new Error('expected a refusal');
}

t.test('the models are the agents the API key may use', async (t) => {
  const all = await openai.models.list();
  t.strictSame(
    all.data.map((m) => m.id),
    AGENTS,
  );
  for (const m of all.data) t.match(m, { object: 'model', owned_by: 'agentmesh', created: Number });
  const scoped = await client('chat-key').models.list();
  t.strictSame(
    scoped.data.map((m) => m.id),
    ['chat'],
    'a scoped key lists its agents only',
  );
  t.match(await openai.models.retrieve('quiz'), { id: 'quiz', object: 'model' });
  t.strictSame(await refusal(client('chat-key').models.retrieve('quiz')), {
    status: 403,
    error: {
      message: 'This API key may not use agent quiz.',
      type: 'invalid_request_error',
      code: 'forbidden',
    },
  });
});

t.test(
  'a completion answers the output, with the earlier messages as history and no client system message',
  async (t) => {
    const before = mesh.model.requests.length;
    const res = await openai.chat.completions.create({
      model: 'chat',
      messages: [
        { role: 'system', content: 'You are a pirate.' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'answer to one' },
        { role: 'developer', content: 'Speak like a pirate.' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
      ],
    });
    t.match(res, {
      id: /^chatcmpl-inv_[0-9a-f]{32}$/,
      object: 'chat.completion',
      model: 'chat',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'answer to two' }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
    t.equal(mesh.model.requests.length, before + 1, 'one model call');
    t.strictSame(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:one',
      'assistant:answer to one',
      'user:two',
    ]);
    const view = await mesh.get(`/invocations/${res.id.slice('chatcmpl-'.length)}`);
    t.match(view.json, {
      agent: 'chat',
      status: 'succeeded',
      input: { prompt: 'two' },
      output: 'answer to two',
    });
  },
);

t.test("the usage is the whole tree's", async (t) => {
  // guard parks on its delegation until it is approved: approve it from another request.
  const done = openai.chat.completions.create({
    model: 'guard',
    messages: [{ role: 'user', content: 'go' }],
  });
  await approveWhenAsked(t);
  const res = await done;
  t.equal(res.choices[0]!.message.content, 'hello world');
  t.strictSame(
    res.usage,
    { prompt_tokens: 33, completion_tokens: 21, total_tokens: 54 },
    'three model calls',
  );
});

t.test('a structured input is the last message as JSON text; a structured output is JSON text', async (t) => {
  const res = await openai.chat.completions.create({
    model: 'quiz',
    messages: [{ role: 'user', content: '{"question": "2 + 2?"}' }],
  });
  t.same(JSON.parse(res.choices[0]!.message.content!), { answer: 'four', n: 4 });
  t.strictSame(lastUser(mesh.model.of('quiz').at(-1)!), '{"question":"2 + 2?"}');
  const text = await refusal(
    openai.chat.completions.create({
      model: 'quiz',
      messages: [{ role: 'user', content: 'what is 2 + 2?' }],
    }),
  );
  t.strictSame(text, {
    status: 400,
    error: {
      message: 'Agent quiz takes structured input: the last message must be it as JSON text.',
      type: 'invalid_request_error',
      code: 'invalid_input',
    },
  });
  const wrong = await refusal(
    openai.chat.completions.create({ model: 'quiz', messages: [{ role: 'user', content: '{"q": 1}' }] }),
  );
  t.match(wrong, { status: 400, error: { code: 'invalid_input', message: /quiz's schema/ } });
});

t.test('a last message that is not a user message, or no message, is 400 invalid_input', async (t) => {
  const assistant = await refusal(
    openai.chat.completions.create({
      model: 'chat',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    }),
  );
  t.strictSame(assistant, {
    status: 400,
    error: {
      message: 'The last message must be a user message: it is the input of the agent.',
      type: 'invalid_request_error',
      code: 'invalid_input',
    },
  });
  const none = await refusal(openai.chat.completions.create({ model: 'chat', messages: [] }));
  t.match(none, { status: 400, error: { type: 'invalid_request_error', code: 'invalid_input' } });
  const image = await refusal(
    openai.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] }],
    }),
  );
  t.match(image, {
    status: 400,
    error: { code: 'invalid_input', message: 'Only text content parts are accepted.' },
  });
});

t.test('an unknown model is 404 agent_not_found naming the agents the key may use', async (t) => {
  t.strictSame(
    await refusal(
      openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    ),
    {
      status: 404,
      error: {
        message: `No agent is named gpt-4o (agents: ${AGENTS.join(', ')}).`,
        type: 'invalid_request_error',
        code: 'agent_not_found',
      },
    },
  );
  t.match(
    await refusal(
      client('chat-key').chat.completions.create({
        model: 'nobody',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ),
    { status: 404, error: { message: 'No agent is named nobody (agents: chat).' } },
  );
});

t.test('without a valid API key every /v1 route is 401; a key outside its scope is 403', async (t) => {
  const ask = { model: 'chat', messages: [{ role: 'user' as const, content: 'hi' }] };
  t.strictSame(await refusal(client('wrong-key').chat.completions.create(ask)), {
    status: 401,
    error: { message: 'The API key is not valid.', type: 'invalid_request_error', code: 'unauthorized' },
  });
  t.match(await refusal(client('wrong-key').models.list()), { status: 401, error: { code: 'unauthorized' } });
  const bare = await fetch(`${base}/v1/models`);
  t.equal(bare.status, 401);
  t.equal(bare.headers.get('www-authenticate'), 'Bearer realm="agentmesh"');
  t.strictSame(await bare.json(), {
    error: {
      message: 'Send an API key as Authorization: Bearer <key>.',
      type: 'invalid_request_error',
      code: 'unauthorized',
    },
  });
  t.strictSame(await refusal(client('chat-key').chat.completions.create({ ...ask, model: 'quiz' })), {
    status: 403,
    error: {
      message: 'This API key may not use agent quiz.',
      type: 'invalid_request_error',
      code: 'forbidden',
    },
  });
  t.equal(
    (await client('chat-key').chat.completions.create(ask)).choices[0]!.message.content,
    'answer to hi',
  );
});

t.test("a failed invocation is its code in OpenAI's shape: server_error for 5xx", async (t) => {
  const failed = await refusal(
    openai.chat.completions.create({ model: 'broken', messages: [{ role: 'user', content: 'hi' }] }),
  );
  t.match(failed, { status: 502, error: { type: 'server_error', code: 'model_error', message: String } });
  const streamed = await refusal(
    (async () => {
      const stream = await openai.chat.completions.create({
        model: 'broken',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      for await (const _ of stream);
    })(),
  );
  t.match(streamed, { error: { type: 'server_error', code: 'model_error' } }, 'a stream ends with the error');
});

t.test(
  'an Idempotency-Key answers a repeated completion with the same one, never a second run',
  async (t) => {
    const key = { headers: { 'Idempotency-Key': `chat-${Date.now()}` } };
    const prompt = 'slow: once only';
    const body = { model: 'chat', messages: [{ role: 'user' as const, content: prompt }] };
    const runs = () => mesh.model.of('chat').filter((r) => lastUser(r) === prompt).length;
    const [first, second] = await Promise.all([
      openai.chat.completions.create(body, key),
      openai.chat.completions.create(body, key),
    ]);
    const third = await openai.chat.completions.create(body, key);
    const same = (c: typeof first) => [c.id, c.created, c.choices[0]?.message.content];
    t.strictSame(same(first), [first.id, first.created, `answer to ${prompt}`]);
    t.strictSame(same(second), same(first), 'a repeat sent with the first gets the same completion');
    t.strictSame(same(third), same(first), 'so does one after it ended');
    const stream = await openai.chat.completions.create({ ...body, stream: true }, key);
    let text = '';
    const ids = new Set<string>();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    t.strictSame(
      [...ids, text],
      [first.id, `answer to ${prompt}`],
      'and a streamed one, the same invocation',
    );
    t.equal(runs(), 1, 'the agent ran once');
    const history = [
      { role: 'user' as const, content: 'earlier' },
      { role: 'assistant' as const, content: 'ok' },
    ];
    t.match(
      await refusal(
        openai.chat.completions.create({ ...body, messages: [...history, ...body.messages] }, key),
      ),
      { status: 422, error: { type: 'invalid_request_error', code: 'idempotency_key_reused' } },
      'the key with another conversation is refused',
    );
    t.match(
      await refusal(
        openai.chat.completions.create(body, { headers: { 'Idempotency-Key': 'k'.repeat(256) } }),
      ),
      { status: 400, error: { type: 'invalid_request_error', code: 'invalid_input' } },
      'a key of the wrong form too',
    );
    t.equal(runs(), 1, 'neither ran anything');
  },
);

t.test('other methods and paths under /v1 answer in the same shape', async (t) => {
  const auth = { authorization: 'Bearer all-key' };
  const get = await fetch(`${base}/v1/chat/completions`, { headers: auth });
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
  t.match(await get.json(), { error: { type: 'invalid_request_error', code: 'method_not_allowed' } });
  const nowhere = await fetch(`${base}/v1/embeddings`, { method: 'POST', headers: auth });
  t.equal(nowhere.status, 404);
  t.match(await nowhere.json(), { error: { type: 'invalid_request_error', code: 'not_found' } });
  const text = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'text/plain' },
    body: 'hi',
  });
  t.equal(text.status, 415);
  t.match(await text.json(), { error: { type: 'invalid_request_error', code: 'unsupported_media_type' } });
  const bad = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{"model": "chat", "messages": [',
  });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: { code: 'invalid_json' } });
});

t.test(
  'a streamed completion: chunks assembled are the output, then stop, the usage and [DONE]',
  async (t) => {
    const stream = await openai.chat.completions.create({
      model: 'chat',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'answer to one' },
        { role: 'user', content: 'two' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const id = chunks[0]!.id;
    t.match(id, /^chatcmpl-inv_[0-9a-f]{32}$/);
    for (const c of chunks)
      t.match(c, { id, object: 'chat.completion.chunk', model: 'chat', created: Number });
    t.equal(chunks[0]!.choices[0]!.delta.role, 'assistant', 'the first chunk names the role');
    const content = chunks.flatMap((c) => c.choices.map((x) => x.delta.content ?? '')).join('');
    t.equal(content, 'answer to two');
    const finish = chunks.findIndex((c) => c.choices[0]?.finish_reason === 'stop');
    t.equal(finish, chunks.length - 2, 'the stop chunk comes before the usage chunk');
    t.strictSame(chunks.at(-1)!.choices, []);
    t.strictSame(chunks.at(-1)!.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    t.strictSame(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:one',
      'assistant:answer to one',
      'user:two',
    ]);

    // On the wire: Server-Sent data lines, the last one [DONE]; no usage chunk unless asked.
    const raw = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer all-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'three' }], stream: true }),
    });
    t.equal(raw.status, 200);
    t.match(raw.headers.get('content-type'), /^text\/event-stream/);
    const events = (await raw.text()).split('\n\n').filter((e) => e.startsWith('data: '));
    t.equal(events.at(-1), 'data: [DONE]');
    const objects = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
    t.notOk(
      objects.some((o) => 'usage' in o),
      'no usage chunk without include_usage',
    );
    t.equal(objects.at(-1).choices[0].finish_reason, 'stop');
  },
);

t.test('a streamed completion of an agent without model calls sends its output as the content', async (t) => {
  const stream = await openai.chat.completions.create({
    model: 'coder',
    messages: [{ role: 'user', content: '{"name": "Ada"}' }],
    stream: true,
  });
  let content = '';
  for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
  t.equal(content, 'hi Ada');
  const plain = await openai.chat.completions.create({
    model: 'coder',
    messages: [{ role: 'user', content: '{"name": "Bob"}' }],
  });
  t.equal(plain.choices[0]!.message.content, 'hi Bob');
});

t.test(
  'a stream watches its tree before the invocation exists, so its first model call is published',
  async (t) => {
    const monitor = await monitorRedis(mesh.redis.port);
    t.teardown(() => monitor.stop());
    const stream = await openai.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let rootId = '';
    for await (const chunk of stream) rootId = chunk.id.slice('chatcmpl-'.length);
    monitor.stop();
    const keys = keyLayout(mesh.prefix);
    const at = (match: (args: string[]) => boolean) => monitor.seen.findIndex((c) => match(c.args));
    const watched = at((a) => a[0]?.toUpperCase() === 'SET' && a[1] === keys.watch(rootId));
    const created = at((a) => a[0]?.toUpperCase() === 'HSET' && a[1] === keys.invocation(rootId, rootId));
    t.ok(watched >= 0 && created >= 0, 'both seen');
    t.ok(watched < created, 'the watch flag is set before the invocation is written');
    t.match(monitor.seen[watched]!.args.slice(2), ['1', /^px$/i, '30000']);
  },
);

t.test(
  "a stream watches its tree and sends the root's deltas as they come, a reset after a blank line",
  async (t) => {
    const stream = await openai.chat.completions.create({
      model: 'guard',
      messages: [{ role: 'user', content: 'go' }],
      stream: true,
    });
    const chunks = stream[Symbol.asyncIterator]();
    const first = (await chunks.next()).value!;
    const rootId = first.id.slice('chatcmpl-'.length);
    const keys = keyLayout(mesh.prefix);
    const ttl = await mesh.client.pttl(keys.watch(rootId));
    t.ok(ttl > 0 && ttl <= 30_000, `the tree is watched, for 30 s at most (${ttl} ms)`);
    // Parked on its approval: its next model call has not begun. Deltas as a runner publishes them
    // (docs/reference/redis-layout.md): a child's are not the root's answer; a reset starts over.
    const view = await mesh.waitForStatus(rootId, 'waiting');
    const delta = (invocationId: string, data: object) =>
      mesh.client.xadd(
        keys.deltas(rootId),
        '*',
        'e',
        JSON.stringify({
          invocationId,
          agent: invocationId === rootId ? 'guard' : 'deployer',
          type: 'delta',
          at: new Date().toISOString(),
          data,
          rootId,
          depth: invocationId === rootId ? 0 : 1,
        }),
      );
    await delta(`${rootId}-t0-call0`, { callId: 't0-model', seq: 0, content: 'child text' });
    await delta(rootId, { callId: 't1-model', seq: 0, content: 'draft' });
    await delta(rootId, { callId: 't1-model', seq: 0, content: 'hello', reset: true });
    let seen = '';
    while (!seen.endsWith('hello')) {
      const next = await chunks.next();
      t.notOk(next.done, 'the stream is still open');
      seen += next.value?.choices[0]?.delta.content ?? '';
    }
    t.equal(seen, 'draft\n\nhello', 'the deltas came while the root waits; nothing retracted');
    await mesh.request('POST', `/invocations/${rootId}/approvals/${view.pendingApprovals[0].callId}`, {
      payload: { approved: true },
    });
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      seen += next.value.choices[0]?.delta.content ?? '';
    t.equal(seen, 'draft\n\nhello world', 'the recorded reply completes the text its deltas began');
  },
);

t.test(
  'the bounds of invoke and of streams hold: 413 past the body limit, 429 past the open streams',
  async (t) => {
    const { base: other } = await listenGateway(t, mesh, { apiKeys: 'all-key', maxStreamsPerKey: 1 });
    const otherAi = new OpenAI({ apiKey: 'all-key', baseURL: `${other}/v1`, maxRetries: 0 });
    const big = await refusal(
      otherAi.chat.completions.create({
        model: 'chat',
        messages: [{ role: 'user', content: 'x'.repeat(1100_000) }],
      }),
    );
    t.match(big, { status: 413, error: { type: 'invalid_request_error', code: 'payload_too_large' } });
    const ask = {
      model: 'guard',
      messages: [{ role: 'user' as const, content: 'go' }],
      stream: true as const,
    };
    const before = (await mesh.get('/invocations?agent=guard&limit=100')).json.items.length;
    const first = (await otherAi.chat.completions.create(ask))[Symbol.asyncIterator]();
    const rootId = (await first.next()).value!.id.slice('chatcmpl-'.length);
    t.match(await refusal(otherAi.chat.completions.create(ask)), {
      status: 429,
      error: { type: 'invalid_request_error', code: 'too_many_streams' },
    });
    t.equal(
      (await mesh.get('/invocations?agent=guard&limit=100')).json.items.length,
      before + 1,
      'the refused one started nothing',
    );
    await approveWhenAsked(t);
    let content = '';
    for (let next = await first.next(); !next.done; next = await first.next())
      content += next.value.choices[0]?.delta.content ?? '';
    t.equal(content, 'hello world');
    t.equal((await mesh.get(`/invocations/${rootId}`)).json.status, 'succeeded');
    const again = await otherAi.chat.completions.create({ ...ask, model: 'chat' });
    for await (const _ of again);
    t.pass('the slot is free once the stream ended');
  },
);

t.test(
  'a gateway shutting down ends its completions with 503 unavailable; the invocations go on',
  async (t) => {
    const { gateway, base: other } = await listenGateway(t, mesh, { apiKeys: 'all-key' });
    const otherAi = new OpenAI({ apiKey: 'all-key', baseURL: `${other}/v1`, maxRetries: 0 });
    const ask = { model: 'guard', messages: [{ role: 'user' as const, content: 'go' }] };
    const stream = await otherAi.chat.completions.create({ ...ask, stream: true });
    const chunks = stream[Symbol.asyncIterator]();
    const rootId = (await chunks.next()).value!.id.slice('chatcmpl-'.length);
    const plain = refusal(otherAi.chat.completions.create(ask));
    await waitUntil(
      async () => (await mesh.get('/approvals')).json.items.length === 2,
      30_000,
      () => 'both to wait on their approvals',
    );
    await gateway.close();
    const streamed = await refusal(
      (async () => {
        for (let next = await chunks.next(); !next.done; next = await chunks.next());
      })(),
    );
    t.match(streamed, {
      error: {
        type: 'server_error',
        code: 'unavailable',
        message: new RegExp(`invocation ${rootId} goes on`),
      },
    });
    t.match(await plain, { status: 503, error: { type: 'server_error', code: 'unavailable' } });
    t.equal((await mesh.get(`/invocations/${rootId}`)).json.status, 'waiting', 'the invocation goes on');
    for (const item of (await mesh.get('/approvals')).json.items)
      await mesh.request('POST', `/invocations/${item.invocationId}/approvals/${item.callId}`, {
        payload: { approved: true },
      });
    await mesh.waitForStatus(rootId, 'succeeded');
  },
);

/** Approves the first pending approval of the caller once there is one. */
async function approveWhenAsked(t: Test): Promise<void> {
  const item = await waitUntil(
    async () => (await mesh.get('/approvals')).json.items[0],
    30_000,
    () => 'an approval to be requested',
  );
  const res = await mesh.request('POST', `/invocations/${item.invocationId}/approvals/${item.callId}`, {
    payload: { approved: true },
  });
  t.equal(res.status, 200);
}
