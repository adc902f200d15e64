// describePlanChange: a fork refused with plan_changed names what changed in the agent (docs/guides/durability.md).
import t from 'tap';
import { definitionOf, describePlanChange } from '../src/plan/describe-plan-change.js';
import type { AgentPlan } from '../src/plan/types.js';

const agent: AgentPlan = {
  name: 'lead',
  kind: 'react',
  description: 'Leads.',
  instructions: 'v1',
  model: 'default',
  tools: ['lookup', 'note'],
  subagents: ['helper'],
  maxIterations: 10,
  maxTokens: 500,
  inputSchema: null,
  outputSchema: null,
  callables: [{ name: 'lookup', description: 'Looks up.', parameters: {} }],
  definitionHash: 'h1',
};

t.test('the definition is the plan entry without its hash and root budget', async (t) => {
  const d = definitionOf(agent);
  t.notOk('definitionHash' in d);
  t.notOk('maxTokens' in d);
  t.equal(d.instructions, 'v1');
});

t.test('the fields that changed are named, with the tools and sub-agents added and removed', async (t) => {
  const before = JSON.parse(JSON.stringify(definitionOf(agent)));
  const now: AgentPlan = {
    ...agent,
    instructions: 'v2',
    tools: ['lookup', 'search'],
    callables: [{ name: 'search', description: 'Searches.', parameters: {} }],
    maxTokens: 9,
  };
  t.equal(
    describePlanChange(before, now),
    'The definition of agent lead changed since the invocation ran: callables changed (added search; removed lookup); instructions changed; tools changed (added search; removed note).',
  );
  t.equal(
    describePlanChange(before, { ...agent, maxIterations: 3 }),
    'The definition of agent lead changed since the invocation ran: maxIterations changed.',
  );
  t.equal(
    describePlanChange(undefined, agent),
    'The definition of agent lead changed since the invocation ran (the earlier definition is no longer known).',
  );
});
