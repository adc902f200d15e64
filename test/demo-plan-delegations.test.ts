// How the offline demo model splits a planner's question (planDelegations, findComputation).
import t from 'tap';
import { findComputation } from '../demo/model/find-computation.js';
import type { DemoTool } from '../demo/model/parse-chat-request.js';
import { planDelegations, splitQuestion } from '../demo/model/plan-delegations.js';

const tool = (
  name: string,
  properties: Record<string, unknown> = { prompt: { type: 'string' } },
): DemoTool => ({
  name,
  description: '',
  parameters: { type: 'object', properties, required: Object.keys(properties) },
});

t.test('written-out arithmetic is found and cut out of the prose around it', async (t) => {
  t.equal(findComputation('and what is 2 * (16 + 4)?'), '2 * (16 + 4)');
  t.equal(findComputation('Also compute (3 + 4) * 2.'), '(3 + 4) * 2');
  t.equal(findComputation('is -3 + 10 positive'), '-3 + 10');
  t.equal(findComputation('(see 2 ^ 10)'), '2 ^ 10');
});

t.test('arithmetic in words becomes an expression', async (t) => {
  t.equal(findComputation('What is 15% of 80?'), '80 * 15 / 100');
  t.equal(findComputation('how much is 7 times 6'), '7 * 6');
  t.equal(findComputation('12 divided by 4 plus 1'), '12 / 4 + 1');
});

t.test('text without a computation has none', async (t) => {
  t.equal(findComputation('How does Redis 7 persist data?'), undefined);
  t.equal(findComputation('a - b'), undefined);
  t.equal(findComputation('1 / 0'), undefined, 'an expression the calculator would refuse is not offered');
});

t.test('a question splits at sentences and joined clauses, leaving the arithmetic out', async (t) => {
  t.strictSame(splitQuestion('What is SSE? How do idempotency keys work? Also compute 3 * 16.'), [
    'What is SSE?',
    'How do idempotency keys work?',
  ]);
  t.strictSame(splitQuestion('What is the ReAct pattern and how do idempotency keys work?'), [
    'What is the ReAct pattern',
    'how do idempotency keys work?',
  ]);
});

t.test('a one-part question gets a second, verifying part', async (t) => {
  t.strictSame(splitQuestion('What is OpenAPI?'), [
    'What is OpenAPI?',
    'Verify the facts behind: What is OpenAPI?',
  ]);
});

t.test('parts go round robin to the sub-agents, with the calculator last when offered', async (t) => {
  const tools = [
    tool('calculator', { expression: { type: 'string' } }),
    tool('_subagent_a'),
    tool('_subagent_b'),
  ];
  t.strictSame(planDelegations('What is SSE? What is AOF? What is a flow? What is 2 + 2?', tools), [
    { name: '_subagent_a', args: { prompt: 'What is SSE?' } },
    { name: '_subagent_b', args: { prompt: 'What is AOF?' } },
    { name: '_subagent_a', args: { prompt: 'What is a flow?' } },
    { name: 'calculator', args: { expression: '2 + 2' } },
  ]);
  t.strictSame(
    planDelegations('What is SSE? What is 2 + 2?', tools.slice(1)).map((c) => c.name),
    ['_subagent_a', '_subagent_b'],
    'no calculator call when none is offered',
  );
});

t.test(
  'a sub-agent without a prompt parameter gets the text in its required string properties',
  async (t) => {
    const tools = [tool('_subagent_q', { question: { type: 'string' }, depth: { type: 'integer' } })];
    t.strictSame(planDelegations('What is SSE?', tools)[0], {
      name: '_subagent_q',
      args: { question: 'What is SSE?' },
    });
  },
);
