// How the offline demo model words its final answers (composeAnswer, fillSchema).
import t from 'tap';
import { composeAnswer } from '../demo/model/compose-answer.js';
import { fillSchema } from '../demo/model/fill-schema.js';
import { parseChatRequest } from '../demo/model/parse-chat-request.js';

const call = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});
// The conversation of one turn of tool calls and their results, as a runner would send it.
function answer(question: string, calls: [string, unknown, string][], system?: string): string {
  const ids = calls.map((_, i) => `c${i}`);
  const messages = [
    ...(system ? [{ role: 'system', content: system }] : []),
    { role: 'user', content: question },
    {
      role: 'assistant',
      content: null,
      tool_calls: calls.map(([name, args], i) => call(ids[i]!, name, args)),
    },
    ...calls.map(([, , content], i) => ({ role: 'tool', tool_call_id: ids[i], content })),
  ];
  return composeAnswer(parseChatRequest({ model: 'm', messages }).messages);
}

t.test(
  'a planner’s answer quotes each sub-agent, unlabelled, and the calculator, in call order',
  async (t) => {
    const text = answer('Q?', [
      [
        '_subagent_researcher',
        { prompt: 'Redis AOF' },
        '[offline demo model] AOF logs every write.\nSources: A.',
      ],
      ['_subagent_fact_checker', { prompt: 'flows' }, '{"verdict":"supported","evidence":"parents wait"}'],
      ['calculator', { expression: '2 * (16 + 4)' }, '{"expression":"2 * (16 + 4)","result":40}'],
    ]);
    t.equal(
      text,
      '[offline demo model] Answer to "Q?", put together from 3 results:\n' +
        '- researcher on "Redis AOF": AOF logs every write. Sources: A.\n' +
        '- fact_checker on "flows": verdict: supported; evidence: parents wait\n' +
        '- calculator: 2 * (16 + 4) = 40',
    );
  },
);

t.test('a researcher’s answer quotes the best excerpt and cites every title', async (t) => {
  const hits = [
    { doc: 'a', title: 'Doc A', excerpt: 'A says this.', score: 3 },
    { doc: 'b', title: 'Doc B', excerpt: 'B says that.', score: 1 },
  ];
  t.equal(
    answer('What?', [['search_docs', { query: 'What?' }, JSON.stringify(hits)]]),
    '[offline demo model] On "What?", "Doc A" says: "A says this." Also relevant: "Doc B".\nSources: Doc A; Doc B.',
  );
  t.equal(
    answer('Zebra?', [['search_docs', { query: 'Zebra?' }, '[]']]),
    '[offline demo model] The documents hold nothing on "Zebra?".',
  );
});

t.test('a failed call is passed on as the failure sentence the mesh wrote', async (t) => {
  const failure = 'Tool calculator execute failed: Division by zero at position 2.';
  t.equal(
    answer('1/0?', [['calculator', { expression: '1 / 0' }, failure]]),
    `[offline demo model] ${failure}`,
  );
});

t.test('without tool results the answer says it has nothing to go on', async (t) => {
  const text = composeAnswer(
    parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).messages,
  );
  t.match(text, /^\[offline demo model\] I was given no tool results for "hi"/);
});

t.test('an output schema prompt turns the answer into JSON with every required property', async (t) => {
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string' }, sources: { type: 'array', items: { type: 'string' } } },
    required: ['answer', 'sources'],
  };
  const hits = [{ doc: 'a', title: 'Doc A', excerpt: 'A says this.', score: 3 }];
  const text = answer(
    'What?',
    [['search_docs', { query: 'What?' }, JSON.stringify(hits)]],
    `Be brief.\nThe final response should be json format, and match the schema ${JSON.stringify(schema)}`,
  );
  t.match(JSON.parse(text), { answer: /^\[offline demo model\] On "What\?"/, sources: ['Doc A'] });
});

t.test('fillSchema fills by type and name, honours enum and const, and recurses into objects', async (t) => {
  const findings = { text: 'T', titles: ['Doc A'], count: 2 };
  const schema = {
    type: 'object',
    properties: {
      verdict: { type: 'string' },
      level: { type: 'string', enum: ['high', 'low'] },
      kind: { const: 'report' },
      hits: { type: 'integer' },
      found: { type: 'boolean' },
      citations: { type: 'string' },
      points: { type: 'array', items: { type: 'string' } },
      detail: { type: 'object', properties: { summary: { type: 'string' } } },
      optional: { type: 'string' },
    },
    required: ['verdict', 'level', 'kind', 'hits', 'found', 'citations', 'points', 'detail'],
  };
  t.strictSame(fillSchema(schema, findings), {
    verdict: 'supported by 1 document(s)',
    level: 'high',
    kind: 'report',
    hits: 2,
    found: true,
    citations: 'Doc A',
    points: ['T'],
    detail: { summary: 'T' },
  });
});
