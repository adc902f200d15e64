/*
 * Port of upstream BaseChatModelSetupSubagentTest and its callable cases.
 * Not applicable to TypeScript:
 * - onlyTheSkillListingIsInjectedWhenSubagentsAreDeclared: agentmesh has no skills, so no listing at all.
 * - aSubagentWithoutASetupIsRejected ("must resolve to a SubagentSetup"): there are no resource
 *   classes or cross-language bridge handles; the analogue is a name that is not a declared agent.
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import type { AgentConfig, MeshConfig } from '../src/config/types.js';
import { buildPlan } from '../src/plan/build-plan.js';
import { type CallableSources, deriveCallables } from '../src/plan/derive-callables.js';
import { PlanError } from '../src/plan/plan-error.js';
import { resolveCallableName } from '../src/plan/resolve-callable-name.js';
import type { CodeAgentShape, ToolInfo } from '../src/plan/types.js';
import { initialMessages } from '../src/react/initial-messages.js';

const customSchema = '{"type":"object","properties":{"path":{"type":"string"}}}';

const tool = (name: string, description = `Tool ${name}.`): ToolInfo => ({
  name,
  description,
  input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  idempotent: true,
  source: 'native',
});
const catalogue = [tool('lookup', 'Looks a word up.'), tool('reviewer', 'Runs the linter.')];

const react = (over: Partial<AgentConfig> = {}): AgentConfig => ({
  instructions: 'You plan.',
  model: 'default',
  tools: [],
  subagents: [],
  ...over,
});
const code = (over: Partial<AgentConfig> = {}): AgentConfig => ({
  module: './agents/x.ts',
  tools: [],
  subagents: [],
  ...over,
});

const mesh = (agents: Record<string, AgentConfig>): MeshConfig => ({
  file: '/srv/mesh.yaml',
  models: { default: { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '', model: 'm' } },
  toolHost: 'http://127.0.0.1:3002',
  tools: [],
  agents,
});

const planOf = (agents: Record<string, AgentConfig>, codeAgents: Record<string, CodeAgentShape> = {}) =>
  buildPlan(mesh(agents), { tools: catalogue, codeAgents });

/** The PlanError a build throws (failing the test when it does not throw one). */
function planError(build: () => unknown): PlanError {
  try {
    build();
  } catch (e) {
    if (e instanceof PlanError) return e;
    throw e;
  }
  throw new Error('expected a PlanError, but the plan was built');
}

t.test('declared sub-agents reach the model as callables after the tools', async (t) => {
  const plan = planOf({
    planner: react({ tools: ['lookup'], subagents: ['reviewer'] }),
    reviewer: react({ description: 'Reviews a file.', input: customSchema }),
  });
  const callables = plan.agents.planner!.callables;
  t.strictSame(
    callables.map((c) => c.name),
    ['lookup', '_subagent_reviewer'],
  );
  t.equal(callables[0]!.description, 'Looks a word up.');
  t.equal(callables[1]!.description, 'Reviews a file. This is subagent.');
  // kept verbatim: same keys, same order, no `required` added
  t.equal(JSON.stringify(callables[1]!.parameters), customSchema);
});

t.test('tools come first in declared order, then sub-agents in declared order', async (t) => {
  const plan = planOf({
    planner: react({ tools: ['reviewer', 'lookup'], subagents: ['zed', 'alpha'] }),
    zed: react({ description: 'Z.' }),
    alpha: react({ description: 'A.' }),
  });
  t.strictSame(
    plan.agents.planner!.callables.map((c) => c.name),
    ['reviewer', 'lookup', '_subagent_zed', '_subagent_alpha'],
  );
});

t.test('an undescribed sub-agent is still delegable', async (t) => {
  for (const description of [undefined, '', '   \n\t']) {
    const plan = planOf({ planner: react({ subagents: ['reviewer'] }), reviewer: react({ description }) });
    t.equal(
      plan.agents.planner!.callables[0]!.description,
      'Delegate a standalone task to sub-agent reviewer This is subagent.',
      `description ${JSON.stringify(description)}`,
    );
  }
});

t.test('a ReAct sub-agent without a declared input takes the default prompt schema', async (t) => {
  const plan = planOf({ planner: react({ subagents: ['researcher'] }), researcher: react() });
  t.equal(
    JSON.stringify(plan.agents.planner!.callables[0]!.parameters),
    '{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"],"additionalProperties":false}',
  );
});

t.test('a sub-agent that types its arguments is declared with the derived schema', async (t) => {
  const input = Type.Object({ path: Type.String(), lines: Type.Integer({ default: 0 }) });
  const plan = planOf(
    { planner: react({ subagents: ['reviewer'] }), reviewer: code() },
    { reviewer: { input } },
  );
  t.strictSame(plan.agents.planner!.callables[0]!.parameters, {
    type: 'object',
    properties: { path: { type: 'string' }, lines: { type: 'integer', default: 0 } },
    required: ['path'],
  });
});

t.test('a sub-agent that states no input shape is rejected at setup', async (t) => {
  for (const shape of [{}, { input: Type.String() }]) {
    const e = planError(() =>
      planOf({ planner: react({ subagents: ['opaque'] }), opaque: code() }, { opaque: shape }),
    );
    t.strictSame(e.problems, [
      {
        agent: 'planner',
        subagent: 'opaque',
        path: '/agents/planner/subagents/0',
        message:
          'Sub-agent opaque declares neither an input schema nor an input type, so there are no arguments for the model to build a call from.',
      },
    ]);
    t.equal(e.code, 'invalid_config');
  }
});

t.test('a sub-agent without an input shape fails the whole setup', async (t) => {
  const e = planError(() =>
    planOf(
      { planner: react({ subagents: ['opaque', 'reviewer'] }), opaque: code(), reviewer: react() },
      { opaque: {} },
    ),
  );
  t.match(e.message, 'Sub-agent opaque');
  t.equal(
    e.message,
    'agent planner: Sub-agent opaque declares neither an input schema nor an input type, so there are no arguments for the model to build a call from.',
  );
});

t.test('a tool and a sub-agent may share a name', async (t) => {
  const plan = planOf({
    planner: react({ tools: ['reviewer'], subagents: ['reviewer'] }),
    reviewer: react(),
  });
  t.strictSame(
    plan.agents.planner!.callables.map((c) => c.name),
    ['reviewer', '_subagent_reviewer'],
  );
  t.strictSame(resolveCallableName('reviewer'), { namespace: 'tool', name: 'reviewer' });
  t.strictSame(resolveCallableName('_subagent_reviewer'), { namespace: 'agent', name: 'reviewer' });
});

t.test('a callable name resolves to one namespace, decided from the prefix alone', async (t) => {
  t.strictSame(resolveCallableName('subagent_reviewer'), { namespace: 'tool', name: 'subagent_reviewer' });
  t.strictSame(resolveCallableName('_subagent__subagent_x'), { namespace: 'agent', name: '_subagent_x' });
});

t.test('a repeated tool name is rejected', async (t) => {
  const e = planError(() => planOf({ planner: react({ tools: ['lookup', 'lookup'] }) }));
  t.equal(e.message, 'agent planner: Duplicate callable name: lookup');
});

t.test('a repeated sub-agent name is rejected', async (t) => {
  const e = planError(() =>
    planOf({ planner: react({ subagents: ['reviewer', 'reviewer'] }), reviewer: react() }),
  );
  t.equal(e.message, 'agent planner: Duplicate callable name: _subagent_reviewer');
  t.equal(e.problems[0]!.subagent, 'reviewer');
});

t.test('a sub-agent that is not a declared agent is rejected', async (t) => {
  const e = planError(() => planOf({ planner: react({ subagents: ['ghost'] }) }));
  t.equal(e.message, 'agent planner: Sub-agent ghost is not a declared agent.');
});

t.test('a tool missing from the catalogue is rejected, naming the agent', async (t) => {
  const e = planError(() => planOf({ planner: react({ tools: ['search_web'] }) }));
  t.equal(e.message, 'agent planner: Tool search_web does not exist.');
});

t.test('each entry is checked for a duplicate first, then resolution, then shape', async (t) => {
  const e = planError(() =>
    planOf(
      { planner: react({ subagents: ['ghost', 'ghost', 'opaque', 'opaque'] }), opaque: code() },
      { opaque: {} },
    ),
  );
  t.strictSame(
    e.problems.map((p) => p.message),
    [
      'Sub-agent ghost is not a declared agent.',
      'Duplicate callable name: _subagent_ghost',
      'Sub-agent opaque declares neither an input schema nor an input type, so there are no arguments for the model to build a call from.',
      'Duplicate callable name: _subagent_opaque',
    ],
  );
});

t.test('reopening does not duplicate the callables', async (t) => {
  const sources: CallableSources = {
    tools: new Map(catalogue.map((c) => [c.name, c])),
    agents: new Map([['reviewer', { description: 'Reviews.', inputSchema: { type: 'object' } }]]),
  };
  const declared = { tools: ['lookup'], subagents: ['reviewer'] };
  const first = deriveCallables('planner', declared, sources);
  const second = deriveCallables('planner', declared, sources);
  t.equal(second.length, 2);
  t.strictSame(second, first);
  const agents = { planner: react({ tools: ['lookup'], subagents: ['reviewer'] }), reviewer: react() };
  t.strictSame(planOf(agents), planOf(agents));
});

t.test('declared sub-agents inject no listing message', async (t) => {
  const plan = planOf({ planner: react({ tools: ['lookup'], subagents: ['reviewer'] }), reviewer: react() });
  const planner = plan.agents.planner!;
  const messages = initialMessages(planner, { prompt: 'Plan the research.' });
  t.strictSame(messages, [
    { role: 'system', content: 'You plan.' },
    { role: 'user', content: 'Plan the research.' },
  ]);
  t.equal(planner.callables.length, 2);
});

t.test('an agent without sub-agents injects nothing and has no callables', async (t) => {
  const plan = planOf({ solo: react({ instructions: undefined }) });
  t.strictSame(initialMessages(plan.agents.solo!, { prompt: 'hi' }), [{ role: 'user', content: 'hi' }]);
  t.strictSame(plan.agents.solo!.callables, []);
});

t.test('a code agent has no model, so no callables, and may delegate to a shapeless sub-agent', async (t) => {
  const plan = planOf(
    { pipeline: code({ subagents: ['opaque'] }), opaque: code() },
    { pipeline: {}, opaque: {} },
  );
  t.strictSame(plan.agents.pipeline!.callables, []);
  t.equal(plan.agents.opaque!.inputSchema, null);
});
