// The offline demo model exercises whatever an agent offers (docs/guides/getting-started.md): a callable the prompt
// names — a tool, a sub-agent with or without its `_subagent_` prefix — or every callable when it
// says "use all tools", is called with arguments built from its schema; then it answers from
// the results. Spoken to over HTTP as the runners speak to it.

import { compileSchema } from '@agentmesh/shared';
import t from 'tap';
import { startDemoModel } from '../demo/model/demo-model.js';
import { fillArguments } from '../demo/model/fill-arguments.js';

const model = await startDemoModel({ port: 0 });
t.teardown(() => model.close());

const fn = (name: string, parameters: Record<string, unknown>) => ({
  type: 'function',
  function: { name, description: `${name} callable`, parameters },
});
const PROMPT = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };
const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2, maxLength: 40 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    units: { type: 'string', enum: ['metric', 'imperial'] },
    detailed: { type: 'boolean' },
  },
  required: ['city', 'days', 'units', 'detailed'],
  additionalProperties: false,
};
// A newcomer's agent: a tool of their own and a sub-agent.
const offered = [fn('get_weather', WEATHER), fn('_subagent_helper', PROMPT)];

type Call = { id: string; function: { name: string; arguments: string } };
async function ask(messages: unknown[], tools = offered) {
  const res = await fetch(`${model.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages, tools }),
  });
  const json = (await res.json()) as {
    choices: { message: { content: string | null; tool_calls?: Call[] } }[];
  };
  return json.choices[0]!.message;
}
const user = (content: string) => ({ role: 'user', content });
const calls = (m: { tool_calls?: Call[] }) =>
  (m.tool_calls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments)]);

t.test(
  'a tool the prompt names is called, not the sub-agent, with arguments valid for its schema',
  async (t) => {
    const reply = await ask([user('What is the weather in Lyon for 3 days? Use get_weather.')]);
    const made = calls(reply);
    t.equal(made.length, 1);
    t.equal(made[0]![0], 'get_weather');
    const args = made[0]![1];
    t.ok(compileSchema(WEATHER)(args).ok, `valid: ${JSON.stringify(args)}`);
    t.match(args, { days: 3, units: 'metric', detailed: true });
  },
);

t.test('a sub-agent is named by its name, and gets the prompt', async (t) => {
  const text = 'Ask helper to summarise the week.';
  t.same(calls(await ask([user(text)])), [['_subagent_helper', { prompt: text }]]);
  t.same(
    calls(await ask([user('Delegate to _subagent_helper now')])).map((c) => c[0]),
    ['_subagent_helper'],
  );
  const plainTool = [fn('helper', PROMPT)];
  t.same(
    calls(await ask([user('no helpers here: unhelpful, helper_x, my-helper')], plainTool)),
    [],
    'whole words only',
  );
  t.same(
    calls(await ask([user('call HELPER.')], plainTool)),
    [['helper', { prompt: 'call HELPER.' }]],
    'case aside',
  );
});

t.test('"use all tools" calls every callable offered, in one reply', async (t) => {
  const reply = await ask([user('Please use all tools on this: Paris.')]);
  t.same(
    calls(reply).map((c) => c[0]),
    ['get_weather', '_subagent_helper'],
  );
});

t.test('then it answers from the results, quoting each', async (t) => {
  const first = await ask([user('use all the tools')]);
  const [weather, helper] = first.tool_calls!;
  const answer = await ask([
    user('use all the tools'),
    {
      role: 'assistant',
      content: null,
      tool_calls: first.tool_calls!.map((c) => ({ ...c, type: 'function' })),
    },
    { role: 'tool', tool_call_id: weather!.id, content: '{"forecast":"sunny","high":21}' },
    { role: 'tool', tool_call_id: helper!.id, content: 'The week was calm.' },
  ]);
  t.notOk(answer.tool_calls);
  t.match(answer.content, /^\[offline demo model\] /);
  t.match(answer.content, 'get_weather: forecast: sunny; high: 21');
  t.match(answer.content, 'helper');
  t.match(answer.content, 'The week was calm.');
});

t.test('a prompt that names nothing keeps the demo agents as they were', async (t) => {
  const reply = await ask([user('How does Redis persist data, and how do BullMQ flows wait?')]);
  t.same(
    calls(reply).map((c) => c[0]),
    ['_subagent_helper', '_subagent_helper'],
    'a planner delegates the parts',
  );
});

t.test('arguments follow the schema: defaults, enums, bounds, formats, nesting', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      expression: { type: 'string' },
      title: { type: 'string', maxLength: 10 },
      code: { type: 'string', minLength: 8 },
      when: { type: 'string', format: 'date-time' },
      site: { type: 'string', format: 'uri' },
      level: { type: 'string', default: 'high' },
      ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
      owner: {
        type: 'object',
        properties: { email: { type: 'string' }, age: { type: 'integer', minimum: 18 } },
        required: ['email', 'age'],
      },
      either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
      fixed: { const: 'v1' },
    },
    required: [
      'expression',
      'title',
      'code',
      'when',
      'site',
      'level',
      'ratio',
      'tags',
      'owner',
      'either',
      'fixed',
    ],
  };
  const args = fillArguments(schema, 'Add it up: 2 * (3 + 4). Then report');
  t.ok(compileSchema(schema)(args).ok, JSON.stringify(args));
  t.match(args, {
    expression: '2 * (3 + 4)',
    title: 'Add it up:',
    code: /^.{8,}$/,
    level: 'high',
    ratio: 1,
    tags: ['Add it up: 2 * (3 + 4). Then report', 'Add it up: 2 * (3 + 4). Then report'],
    owner: { email: 'someone@example.com', age: 18 },
    either: 2,
    fixed: 'v1',
  });
  t.ok(Date.parse(args.when as string) > 0);
  t.strictSame(fillArguments({ type: 'object' }, 'x'), {}, 'no properties, no arguments');
});
