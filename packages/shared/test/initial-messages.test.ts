/*
 * The child's starting conversation (upstream contracts 17 and 23 in docs/reference/upstream-contracts.md;
 * ReActSubagentTest's message assertions). Not applicable: the skills listing (agentmesh has no skills).
 */
import t from 'tap';
import { DEFAULT_INPUT_SCHEMA } from '../src/plan/default-input-schema.js';
import type { AgentPlan } from '../src/plan/types.js';
import { initialMessages } from '../src/react/initial-messages.js';

type Shape = Pick<AgentPlan, 'instructions' | 'inputSchema' | 'outputSchema'>;
const promptAgent: Shape = { inputSchema: { ...DEFAULT_INPUT_SCHEMA }, outputSchema: null };
const answer = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

t.test('instructions are the leading system message, literally, with no {prompt} substitution', async (t) => {
  const messages = initialMessages(
    { ...promptAgent, instructions: 'Literal {prompt} instructions' },
    { prompt: 'go' },
  );
  t.strictSame(messages, [
    { role: 'system', content: 'Literal {prompt} instructions' },
    { role: 'user', content: 'go' },
  ]);
});

t.test('the schema prompt follows the instructions when an output schema is declared', async (t) => {
  const messages = initialMessages(
    { ...promptAgent, instructions: 'Research.', outputSchema: answer },
    { prompt: 'q' },
  );
  t.strictSame(messages, [
    { role: 'system', content: 'Research.' },
    {
      role: 'system',
      content:
        'The final response should be json format, and match the schema {"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}',
    },
    { role: 'user', content: 'q' },
  ]);
});

t.test('without instructions the schema prompt comes first', async (t) => {
  const messages = initialMessages({ ...promptAgent, outputSchema: { type: 'string' } }, { prompt: 'q' });
  t.strictSame(
    messages.map((m) => m.content),
    ['The final response should be json format, and match the schema {"type":"string"}', 'q'],
  );
});

t.test('without instructions or an output schema there is only the user message', async (t) => {
  t.strictSame(initialMessages(promptAgent, { prompt: 'hello' }), [{ role: 'user', content: 'hello' }]);
  t.strictSame(initialMessages({ ...promptAgent, instructions: '' }, { prompt: 'hello' }), [
    { role: 'user', content: 'hello' },
  ]);
});

t.test('the user message is the prompt text under a prompt-only schema', async (t) => {
  const described = { type: 'object', properties: { prompt: { type: 'string', description: 'The task.' } } };
  t.equal(initialMessages(promptAgent, { prompt: 'review the diff' })[0]!.content, 'review the diff');
  t.equal(initialMessages({ ...promptAgent, inputSchema: described }, { prompt: 'x' })[0]!.content, 'x');
});

t.test('the user message is the input as compact JSON under any other schema', async (t) => {
  const review = { type: 'object', properties: { path: { type: 'string' }, lines: { type: 'integer' } } };
  t.equal(
    initialMessages({ ...promptAgent, inputSchema: review }, { path: 'a.ts', lines: 3 })[0]!.content,
    '{"path":"a.ts","lines":3}',
  );
  const promptAndMore = {
    type: 'object',
    properties: { prompt: { type: 'string' }, depth: { type: 'integer' } },
  };
  t.equal(
    initialMessages({ ...promptAgent, inputSchema: promptAndMore }, { prompt: 'p', depth: 2 })[0]!.content,
    '{"prompt":"p","depth":2}',
  );
  t.equal(initialMessages({ ...promptAgent, inputSchema: null }, 'plain')[0]!.content, '"plain"');
});

t.test(
  'an input that is not just a string prompt is sent as compact JSON even under the prompt schema',
  async (t) => {
    t.equal(initialMessages(promptAgent, { prompt: 42 })[0]!.content, '{"prompt":42}');
    t.equal(
      initialMessages(promptAgent, { prompt: 'p', extra: true })[0]!.content,
      '{"prompt":"p","extra":true}',
    );
  },
);

t.test('no message lists the sub-agents or shows the routing description', async (t) => {
  const agent: AgentPlan = {
    name: 'planner',
    kind: 'react',
    description: 'Routes research.',
    instructions: 'Plan.',
    model: 'default',
    tools: [],
    subagents: ['researcher'],
    maxIterations: 10,
    inputSchema: { ...DEFAULT_INPUT_SCHEMA },
    outputSchema: null,
    callables: [
      { name: '_subagent_researcher', description: 'Researches. This is subagent.', parameters: {} },
    ],
    definitionHash: '0'.repeat(64),
  };
  const messages = initialMessages(agent, { prompt: 'Plan it.' });
  t.equal(messages.length, 2);
  t.notMatch(JSON.stringify(messages), /_subagent_|researcher|Routes research/);
});
