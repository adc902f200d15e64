/*
 * Port of upstream AgentPlanSubagentResourceTest and the Python plan tests,
 * plus the whole-plan behaviour of buildPlan. Not applicable to TypeScript:
 * - "a setup instance compiles into an AGENT provider", "a descriptor compiles and resolves (its
 *   endpoint is kept)", "anything else is rejected (must be a SubagentSetup, a ResourceDescriptor, or
 *   an Agent)", "a child Agent becomes an InternalSubagentProvider with scope = name": Java/Python
 *   resource providers and descriptors. Every agentmesh agent is a named config entry with its own
 *   queue; the config loader rejects a malformed entry. The analogues kept here: every agent becomes
 *   one plan entry, and one child named by two parents is one entry with one callable shape.
 * - `<root> -> b -> root` / `<root> -> itself`: there is no unnamed root agent, so a cycle through any
 *   agent is written with names (`a -> b -> a`, `a -> a`).
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import type { AgentConfig, MeshConfig } from '../src/config/types.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { buildPlan } from '../src/plan/build-plan.js';
import { checkToolName } from '../src/plan/check-tool-name.js';
import { findCycles } from '../src/plan/find-cycles.js';
import { PlanError } from '../src/plan/plan-error.js';
import type { CodeAgentShape, ToolInfo } from '../src/plan/types.js';

const tool = (name: string, source: ToolInfo['source'] = 'native'): ToolInfo => ({
  name,
  description: `Tool ${name}.`,
  input: { type: 'object', properties: { q: { type: 'string' } } },
  idempotent: false,
  source,
});
const react = (over: Partial<AgentConfig> = {}): AgentConfig => ({
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
const build = (
  agents: Record<string, AgentConfig>,
  tools: ToolInfo[] = [],
  codeAgents: Record<string, CodeAgentShape> = {},
) => buildPlan(mesh(agents), { tools, codeAgents });

/** The PlanError a build throws. */
function planError(fn: () => unknown): PlanError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PlanError) return e;
    throw e;
  }
  throw new Error('expected a PlanError, but the plan was built');
}

const reserved = "must not start with the reserved prefix '_subagent_'";

t.test('every declared agent becomes one plan entry of its kind', async (t) => {
  const plan = build({ planner: react({ subagents: ['worker'], maxIterations: 8 }), worker: code() }, [], {
    worker: { inputSchema: { type: 'object' } },
  });
  t.strictSame(Object.keys(plan.agents), ['planner', 'worker']);
  t.equal(plan.agents.planner!.kind, 'react');
  t.equal(plan.agents.planner!.maxIterations, 8);
  t.equal(plan.agents.worker!.kind, 'code');
  t.equal(plan.agents.worker!.module, './agents/x.ts');
  t.equal(plan.agents.worker!.maxIterations, 10, 'maxIterations defaults to 10');
});

t.test('an absent description reads as empty rather than undefined', async (t) => {
  t.equal(build({ solo: react() }).agents.solo!.description, '');
});

t.test('one child named by two parents is one entry with the same callable for both', async (t) => {
  const plan = build({
    planner: react({ subagents: ['reviewer'] }),
    auditor: react({ subagents: ['reviewer'] }),
    reviewer: react({ description: 'Reviews.' }),
  });
  t.strictSame(plan.agents.planner!.callables, plan.agents.auditor!.callables);
  t.equal(Object.keys(plan.agents).length, 3);
});

t.test('a tool name with the reserved sub-agent prefix is rejected', async (t) => {
  const e = planError(() => build({ solo: react() }, [tool('_subagent_evil')]));
  t.strictSame(e.problems, [
    {
      path: '/tools',
      message: "Tool name _subagent_evil must not start with the reserved prefix '_subagent_'.",
    },
  ]);
  t.equal(e.code, 'invalid_config');
});

t.test('a tool name an MCP server advertises with the reserved prefix is rejected', async (t) => {
  const e = planError(() => build({ solo: react() }, [tool('_subagent_fs', 'mcp')]));
  t.equal(
    e.message,
    "Tool name _subagent_fs must not start with the reserved prefix '_subagent_' (advertised by an MCP server).",
  );
  t.throws(() => checkToolName('_subagent_read', 'MCP server files'), {
    code: 'invalid_config',
    message:
      "Tool name _subagent_read must not start with the reserved prefix '_subagent_' (advertised by MCP server files).",
  });
  t.doesNotThrow(() => checkToolName('subagent_read'));
  t.doesNotThrow(() => checkToolName('read_subagent_'));
  t.match(
    (() => {
      try {
        checkToolName('_subagent_');
      } catch (e) {
        return isMeshError(e) ? e.message : '';
      }
      return '';
    })(),
    reserved,
  );
});

t.test('a cycle between two agents is reported once, from the first declared agent on it', async (t) => {
  const e = planError(() => build({ a: react({ subagents: ['b'] }), b: react({ subagents: ['a'] }) }));
  t.strictSame(e.problems, [
    { agent: 'a', path: '/agents/a/subagents', message: 'Cyclic sub-agent definition detected: a -> b -> a' },
  ]);
  t.equal(e.message, 'agent a: Cyclic sub-agent definition detected: a -> b -> a');
});

t.test('an agent that delegates to itself is a cycle', async (t) => {
  const e = planError(() => build({ a: react({ subagents: ['a'] }) }));
  t.equal(e.message, 'agent a: Cyclic sub-agent definition detected: a -> a');
});

t.test('a longer cycle not through the first agent starts at its first declared member', async (t) => {
  const e = planError(() =>
    build({
      root: react({ subagents: ['x'] }),
      z: react({ subagents: ['x'] }),
      x: react({ subagents: ['y'] }),
      y: react({ subagents: ['z'] }),
    }),
  );
  t.equal(e.message, 'agent z: Cyclic sub-agent definition detected: z -> x -> y -> z');
});

t.test('each distinct cycle is reported once; a diamond is not a cycle', async (t) => {
  t.strictSame(
    findCycles({ a: ['b', 'c', 'b'], b: ['c', 'a'], c: ['a'], d: ['d'] }).map((c) => c.join(' -> ')),
    ['a -> b -> c -> a', 'a -> b -> a', 'a -> c -> a', 'd -> d'],
  );
  t.strictSame(findCycles({ top: ['left', 'right'], left: ['bottom'], right: ['bottom'], bottom: [] }), []);
  t.doesNotThrow(() =>
    build({
      top: react({ subagents: ['left', 'right'] }),
      left: react({ subagents: ['bottom'] }),
      right: react({ subagents: ['bottom'] }),
      bottom: react(),
    }),
  );
});

t.test('a schema that does not build is a problem naming its agent', async (t) => {
  const e = planError(() => build({ researcher: react({ input: ' ' }) }));
  t.strictSame(e.problems, [
    {
      agent: 'researcher',
      path: '/agents/researcher/input',
      message: 'Sub-agent input schema must not be blank.',
    },
  ]);
  t.equal(e.message, 'agent researcher: Sub-agent input schema must not be blank.');
});

t.test('a sub-agent whose own schema is broken is reported once, against itself', async (t) => {
  const e = planError(() =>
    build({ planner: react({ subagents: ['worker'] }), worker: code() }, [], {
      worker: { input: Type.Object({ at: Type.Date() }) },
    }),
  );
  t.equal(e.problems.length, 1);
  t.equal(e.problems[0]!.agent, 'worker');
  t.match(e.problems[0]!.message, 'Sub-agent input type Object {at} cannot be rendered as a JSON Schema.');
});

t.test('every problem of every agent is reported at once', async (t) => {
  const e = planError(() =>
    build(
      {
        planner: react({
          tools: ['lookup', 'lookup', 'search_web'],
          subagents: ['ghost', 'opaque', 'critic'],
        }),
        opaque: code(),
        critic: react({ input: '{"type":"object"', subagents: ['planner'] }),
        loop: react({ subagents: ['loop'] }),
      },
      [tool('lookup'), tool('_subagent_x', 'mcp')],
      { opaque: {} },
    ),
  );
  t.equal(
    e.message,
    [
      "Tool name _subagent_x must not start with the reserved prefix '_subagent_' (advertised by an MCP server).",
      'agent planner: Duplicate callable name: lookup',
      'agent planner: Tool search_web does not exist.',
      'agent planner: Sub-agent ghost is not a declared agent.',
      'agent planner: Sub-agent opaque declares neither an input schema nor an input type, so there are no arguments for the model to build a call from.',
      'agent critic: Sub-agent input schema must be valid JSON.',
      'agent planner: Cyclic sub-agent definition detected: planner -> critic -> planner',
      'agent loop: Cyclic sub-agent definition detected: loop -> loop',
    ].join('\n'),
  );
  t.strictSame(
    e.details?.map((d) => d.path),
    [
      '/tools',
      '/agents/planner/tools/1',
      '/agents/planner/tools/2',
      '/agents/planner/subagents/0',
      '/agents/planner/subagents/1',
      '/agents/critic/input',
      '/agents/planner/subagents',
      '/agents/loop/subagents',
    ],
  );
});

t.test('the definition hash is stable and covers the callables', async (t) => {
  const agents = (description: string) => ({
    planner: react({ instructions: 'Plan.', subagents: ['reviewer'] }),
    reviewer: react({ description }),
  });
  const one = build(agents('Reviews.')).agents.planner!.definitionHash;
  t.match(one, /^[0-9a-f]{64}$/);
  t.equal(build(agents('Reviews.')).agents.planner!.definitionHash, one);
  t.not(
    build(agents('Reviews files.')).agents.planner!.definitionHash,
    one,
    'a child description change shows',
  );
});

t.test('an agent named __proto__ is an ordinary entry', async (t) => {
  const plan = build(Object.fromEntries([['__proto__', react({ description: 'odd' })]]));
  t.equal(Object.getPrototypeOf(plan.agents), Object.prototype);
  t.equal(Object.getOwnPropertyDescriptor(plan.agents, '__proto__')?.value.description, 'odd');
});
