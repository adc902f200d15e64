// The offline demo model over real HTTP, spoken to as an OpenAI Chat Completions client would.
import t from 'tap';
import { startDemoModel } from '../demo/model/demo-model.js';

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}
interface Completion {
  object: string;
  choices: {
    message: { role: string; content: string | null; tool_calls?: ToolCall[] };
    finish_reason: string;
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const model = await startDemoModel({ port: 0 });
t.teardown(() => model.close());

const fn = (name: string, properties: Record<string, unknown>) => ({
  type: 'function',
  function: {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties, required: Object.keys(properties) },
  },
});
const planner = [
  fn('calculator', { expression: { type: 'string' } }),
  fn('_subagent_researcher', { prompt: { type: 'string' } }),
  fn('_subagent_fact_checker', { prompt: { type: 'string' } }),
];
const researcher = [fn('search_docs', { query: { type: 'string' }, k: { type: 'integer' } })];
const QUESTION =
  'How does Redis persist data with the append-only file, how do BullMQ flows wait for children, and what is 2 * (16 + 4)?';

async function chat(body: unknown): Promise<{ status: number; json: Completion & { error?: unknown } }> {
  const res = await fetch(`${model.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Completion };
}
const ask = (messages: unknown[], tools: unknown[]) => chat({ model: 'gpt-4o-mini', messages, tools });

t.test('a planner delegates two or more parts in parallel, plus the calculator, in one reply', async (t) => {
  const { status, json } = await ask(
    [
      { role: 'system', content: 'You plan.' },
      { role: 'user', content: QUESTION },
    ],
    planner,
  );
  t.equal(status, 200);
  t.equal(json.object, 'chat.completion');
  const [choice] = json.choices;
  t.equal(choice?.finish_reason, 'tool_calls');
  t.equal(choice?.message.content, null);
  const calls = choice?.message.tool_calls ?? [];
  const delegations = calls.filter((c) => c.function.name.startsWith('_subagent_'));
  t.ok(delegations.length >= 2, `${delegations.length} delegations`);
  t.strictSame(
    new Set(delegations.map((c) => c.function.name)),
    new Set(['_subagent_researcher', '_subagent_fact_checker']),
  );
  for (const c of delegations) t.match(JSON.parse(c.function.arguments), { prompt: /\S/ });
  t.strictSame(JSON.parse(delegations[0]!.function.arguments), {
    prompt: 'How does Redis persist data with the append-only file',
  });
  const calculator = calls.find((c) => c.function.name === 'calculator');
  t.strictSame(JSON.parse(calculator?.function.arguments ?? '{}'), { expression: '2 * (16 + 4)' });
  t.equal(new Set(calls.map((c) => c.id)).size, calls.length, 'tool-call ids are unique');
  t.ok(json.usage.prompt_tokens > 0 && json.usage.completion_tokens > 0);
  t.equal(json.usage.total_tokens, json.usage.prompt_tokens + json.usage.completion_tokens);
});

t.test(
  'a one-part question still goes to two sub-agents, and no calculator without arithmetic',
  async (t) => {
    const { json } = await ask([{ role: 'user', content: 'What is the ReAct pattern?' }], planner);
    const names = json.choices[0]?.message.tool_calls?.map((c) => c.function.name);
    t.strictSame(names, ['_subagent_researcher', '_subagent_fact_checker']);
  },
);

t.test('a researcher searches the docs with its prompt', async (t) => {
  const { json } = await ask(
    [
      { role: 'system', content: 'You research.' },
      { role: 'user', content: 'What is SSE?' },
    ],
    researcher,
  );
  const calls = json.choices[0]?.message.tool_calls ?? [];
  t.equal(calls.length, 1);
  t.equal(calls[0]?.function.name, 'search_docs');
  t.strictSame(JSON.parse(calls[0]!.function.arguments), { query: 'What is SSE?', k: 3 });
});

const hits = [
  {
    doc: 'server-sent-events',
    title: 'Server-Sent Events (SSE)',
    excerpt: 'Server-Sent Events let a server push events.',
    score: 5,
  },
];
const afterSearch = [
  { role: 'user', content: 'What is SSE?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'search_docs', arguments: '{"query":"What is SSE?"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(hits) },
];

t.test('with tool results it answers with labelled text that quotes them and cites the titles', async (t) => {
  const { json } = await ask(afterSearch, researcher);
  const [choice] = json.choices;
  t.equal(choice?.finish_reason, 'stop');
  t.notOk(choice?.message.tool_calls);
  const content = choice?.message.content ?? '';
  t.ok(content.startsWith('[offline demo model] '), content);
  t.match(content, '"Server-Sent Events let a server push events."');
  t.match(content, 'Sources: Server-Sent Events (SSE).');
});

t.test(
  'when a system message asks for a JSON schema, the answer is JSON with its required properties',
  async (t) => {
    const schema = {
      type: 'object',
      properties: { verdict: { type: 'string' }, evidence: { type: 'string' } },
      required: ['verdict', 'evidence'],
    };
    const system = {
      role: 'system',
      content: `The final response should be json format, and match the schema ${JSON.stringify(schema)}`,
    };
    const { json } = await ask([system, ...afterSearch], researcher);
    const answer = JSON.parse(json.choices[0]?.message.content ?? '');
    t.strictSame(Object.keys(answer), ['verdict', 'evidence']);
    t.match(answer, {
      verdict: /supported/,
      evidence: /^\[offline demo model\] .*Server-Sent Events let a server push events/s,
    });
  },
);

t.test('malformed requests get 400 with an OpenAI-style error body', async (t) => {
  const bad = [
    '{not json',
    { model: 'm' },
    { model: 'm', messages: [] },
    { messages: [{ role: 'user', content: 'hi' }] },
    { model: 'm', messages: [{ role: 'wizard', content: 'hi' }] },
    { model: 'm', messages: [{ role: 'tool', content: 'x' }] },
    { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: {} }] },
  ];
  for (const body of bad) {
    const { status, json } = await chat(body);
    t.equal(status, 400, JSON.stringify(body));
    t.match(
      json.error,
      { message: String, type: 'invalid_request_error', code: String },
      JSON.stringify(body),
    );
  }
});

t.test('GET /v1/models lists the demo model and unknown URLs get 404', async (t) => {
  const models = await fetch(`${model.url}/models`);
  t.match(await models.json(), { object: 'list', data: [{ id: 'offline-demo-model', object: 'model' }] });
  const missing = await fetch(`${model.url}/embeddings`, { method: 'POST', body: '{}' });
  t.equal(missing.status, 404);
  t.match(await missing.json(), { error: { type: 'invalid_request_error', code: 'unknown_url' } });
});

/** A streamed answer's chunks, read from its Server-Sent Events; `[DONE]` last. */
async function streamedChunks(
  body: Record<string, unknown>,
): Promise<{ type: string | null; events: any[] }> {
  const res = await fetch(`${model.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
  });
  const text = await res.text();
  const data = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length));
  t.equal(data.at(-1), '[DONE]', 'the stream ends with [DONE]');
  return { type: res.headers.get('content-type'), events: data.slice(0, -1).map((d) => JSON.parse(d)) };
}

t.test('asked to stream, it streams chunks that add up to the answer it gives unstreamed', async (t) => {
  const conversations = [
    {
      messages: [
        { role: 'system', content: 'You plan.' },
        { role: 'user', content: QUESTION },
      ],
      tools: planner,
    },
    { messages: [{ role: 'user', content: 'Say hello in a few words.' }], tools: [] },
  ];
  for (const { messages, tools } of conversations) {
    const body = { model: 'gpt-4o-mini', messages, tools };
    const plain = (await chat(body)).json.choices[0]!;
    const { type, events } = await streamedChunks(body);
    t.match(type, /^text\/event-stream/);
    t.ok(events.every((e) => e.object === 'chat.completion.chunk'));
    let content: string | null = null;
    const calls: { name: string; arguments: string }[] = [];
    let finish: string | undefined;
    for (const e of events.slice(0, -1)) {
      const choice = e.choices[0];
      if (typeof choice.delta.content === 'string') content = (content ?? '') + choice.delta.content;
      for (const c of choice.delta.tool_calls ?? []) {
        calls[c.index] ??= { name: '', arguments: '' };
        if (c.function.name) calls[c.index]!.name = c.function.name;
        calls[c.index]!.arguments += c.function.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    t.equal(finish, plain.finish_reason);
    t.equal(content, plain.message.content, 'the content adds up');
    t.same(
      calls.map((c) => c.name),
      (plain.message.tool_calls ?? []).map((c) => c.function.name),
      'the same calls',
    );
    if (plain.message.content) t.ok(events.length > 3, 'word by word');
    const usage = events.at(-1);
    t.same(usage.choices, [], 'the last chunk carries the usage alone');
    t.ok(usage.usage.total_tokens > 0);
  }
});
