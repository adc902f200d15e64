// The agent plan (src/plan/): building a plan from a config, the callables each agent offers its
// model, the sub-agent input and output schemas, the plan JSON and its round trip, and naming what
// changed in an agent's definition.
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { parse } from 'yaml';
import type { AgentConfig, MeshConfig } from '../src/config/types.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { buildPlan } from '../src/plan/build-plan.js';
import { checkToolName } from '../src/plan/check-tool-name.js';
import { DEFAULT_INPUT_SCHEMA } from '../src/plan/default-input-schema.js';
import { type CallableSources, deriveCallables } from '../src/plan/derive-callables.js';
import { deriveInputSchema } from '../src/plan/derive-input-schema.js';
import { deriveSchema } from '../src/plan/derive-schema.js';
import { definitionOf, describePlanChange } from '../src/plan/describe-plan-change.js';
import { effectiveInputSchema, effectiveOutputSchema } from '../src/plan/effective-schema.js';
import { explicitInputSchema } from '../src/plan/explicit-input-schema.js';
import { explicitSchema } from '../src/plan/explicit-schema.js';
import { findCycles } from '../src/plan/find-cycles.js';
import { PlanError } from '../src/plan/plan-error.js';
import { planFromJSON } from '../src/plan/plan-from-json.js';
import { planToJSON } from '../src/plan/plan-to-json.js';
import { resolveCallableName } from '../src/plan/resolve-callable-name.js';
import type { AgentPlan, CodeAgentShape, MeshPlan, ToolInfo } from '../src/plan/types.js';
import { initialMessages } from '../src/react/initial-messages.js';

/** A mesh config of `agents` around one model. */
const mesh = (agents: Record<string, AgentConfig>): MeshConfig => ({
  file: '/srv/mesh.yaml',
  models: { default: { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '', model: 'm' } },
  toolHost: 'http://127.0.0.1:3002',
  tools: [],
  agents,
});

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

/** A sub-agent input schema given as a JSON string. */
const customSchema = '{"type":"object","properties":{"path":{"type":"string"}}}';

t.test('buildPlan', async (t) => {
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
  const build = (
    agents: Record<string, AgentConfig>,
    tools: ToolInfo[] = [],
    codeAgents: Record<string, CodeAgentShape> = {},
  ) => buildPlan(mesh(agents), { tools, codeAgents });

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
      {
        agent: 'a',
        path: '/agents/a/subagents',
        message: 'Cyclic sub-agent definition detected: a -> b -> a',
      },
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
});

t.test('callables: deriveCallables, resolveCallableName', async (t) => {
  /*
   * Port of upstream BaseChatModelSetupSubagentTest and its callable cases.
   * Not applicable to TypeScript:
   * - onlyTheSkillListingIsInjectedWhenSubagentsAreDeclared: agentmesh has no skills, so no listing at all.
   * - aSubagentWithoutASetupIsRejected ("must resolve to a SubagentSetup"): there are no resource
   *   classes or cross-language bridge handles; the analogue is a name that is not a declared agent.
   */

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

  const planOf = (agents: Record<string, AgentConfig>, codeAgents: Record<string, CodeAgentShape> = {}) =>
    buildPlan(mesh(agents), { tools: catalogue, codeAgents });

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
    const plan = planOf({
      planner: react({ tools: ['lookup'], subagents: ['reviewer'] }),
      reviewer: react(),
    });
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

  t.test(
    'a code agent has no model, so no callables, and may delegate to a shapeless sub-agent',
    async (t) => {
      const plan = planOf(
        { pipeline: code({ subagents: ['opaque'] }), opaque: code() },
        { pipeline: {}, opaque: {} },
      );
      t.strictSame(plan.agents.pipeline!.callables, []);
      t.equal(plan.agents.opaque!.inputSchema, null);
    },
  );
});

t.test('sub-agent schemas: effectiveInputSchema, explicitInputSchema, deriveSchema', async (t) => {
  /*
   * Port of upstream SubagentSetupTest and its Python mirror test_subagent.py.
   * Not applicable to TypeScript:
   * - nullDescriptorIsRejectedAtConstruction, mismatchedDescriptorClazzIsRejectedAtConstruction: Java
   *   resource descriptors; an agent here is a config entry, not a class rebuilt from a descriptor.
   * - Python "register as AGENT", "a duplicate AGENT name raises", "several AGENT resources coexist":
   *   there is no resource registry; agents are the keys of one `agents:` mapping.
   * - Python "a non-BaseModel input type is not supported": the analogue is a declaration that is neither
   *   a TypeBox type, a mapping nor a JSON string, tested below.
   * - theDeclaredTypesStayOutOfThePlanJson, theMetadataSerializesUnderTheCrossLanguageKeys and "a derived
   *   schema is carried in the plan JSON" live under planToJSON and planFromJSON below.
   */

  const Review = Type.Object({
    path: Type.String(),
    lines: Type.Integer({ default: 0 }),
    payload: Type.Uint8Array(),
  });
  const code: AgentConfig = { module: './agents/x.ts', tools: [], subagents: [] };
  const react: AgentConfig = { model: 'default', tools: [], subagents: [] };

  /** The message of the invalid_config error `fn` throws. */
  function configError(fn: () => unknown): string {
    try {
      fn();
    } catch (e) {
      if (isMeshError(e, 'invalid_config')) return e.message;
      throw e;
    }
    throw new Error('expected an invalid_config error');
  }

  const unrenderable = (type: string, reason: string) =>
    `Sub-agent input type ${type} cannot be rendered as a JSON Schema. Declare an input schema explicitly, ` +
    'or use an input type whose fields are all JSON-Schema-renderable. Rendering it reported: ' +
    reason;

  t.test('a code agent that declares nothing states no shape for its arguments', async (t) => {
    t.equal(effectiveInputSchema(code, {}), null);
    t.equal(effectiveInputSchema(code), null);
    t.equal(effectiveOutputSchema(code, {}), null);
  });

  t.test('a description alone still states no input shape', async (t) => {
    t.equal(effectiveInputSchema({ ...code, description: 'Reviews a file.' }, {}), null);
  });

  t.test('a blank input schema is rejected at construction', async (t) => {
    for (const blank of ['', ' ', '\n\t ']) {
      t.equal(
        configError(() => explicitInputSchema(blank)),
        'Sub-agent input schema must not be blank.',
      );
    }
    t.equal(
      configError(() => effectiveInputSchema(code, { inputSchema: ' ' })),
      'Sub-agent input schema must not be blank.',
    );
  });

  t.test('an input schema that is not JSON, or has trailing tokens, is rejected', async (t) => {
    for (const text of ['{"type":"object"', '{"type":"object"} x', 'type: object', '{"type":"object"}{}']) {
      t.equal(
        configError(() => explicitInputSchema(text)),
        'Sub-agent input schema must be valid JSON.',
        text,
      );
    }
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    t.equal(
      configError(() => explicitInputSchema(cyclic)),
      'Sub-agent input schema must be valid JSON.',
    );
  });

  t.test('an input schema that does not describe a JSON object is rejected', async (t) => {
    for (const value of [
      '{"type":"string"}',
      '[]',
      '"object"',
      '42',
      '{}',
      { type: 'array' },
      [],
      42,
      new Date(),
    ]) {
      t.equal(
        configError(() => explicitInputSchema(value)),
        'Sub-agent input schema must describe a JSON object.',
        JSON.stringify(value),
      );
    }
  });

  t.test('an absent input schema is left to the input type', async (t) => {
    const derived = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const input = Type.Object({ path: Type.String() });
    t.strictSame(effectiveInputSchema(code, { input }), derived);
    t.strictSame(effectiveInputSchema(code, { inputSchema: undefined, input }), derived);
    t.strictSame(effectiveInputSchema(code, { inputSchema: null, input }), derived);
  });

  t.test('an input type is rendered as the input schema', async (t) => {
    t.equal(
      JSON.stringify(deriveInputSchema(Review)),
      '{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"integer","default":0},' +
        '"payload":{"type":"string","format":"binary"}},"required":["path","payload"]}',
    );
  });

  t.test('TypeBox-private keys and symbols are dropped from a derived schema', async (t) => {
    const type = Type.Object(
      { name: Type.Optional(Type.String({ $id: 'Name', description: 'Who.', maxLength: 9 })) },
      { $id: 'Person', title: 'Person', additionalProperties: false },
    );
    const schema = deriveSchema(type);
    t.equal(
      JSON.stringify(schema),
      '{"type":"object","title":"Person","properties":{"name":{"type":"string","description":"Who.","maxLength":9}},"additionalProperties":false}',
    );
    t.strictSame(Object.getOwnPropertySymbols(schema), []);
  });

  t.test('an explicit input schema wins over the input type', async (t) => {
    const input = Type.Object({ other: Type.Number() });
    t.equal(JSON.stringify(effectiveInputSchema(code, { inputSchema: customSchema, input })), customSchema);
    t.equal(JSON.stringify(effectiveInputSchema(code, { input: JSON.parse(customSchema) })), customSchema);
    t.equal(JSON.stringify(effectiveInputSchema({ ...code, input: customSchema }, { input })), customSchema);
  });

  t.test('an input type that renders as no object states no schema', async (t) => {
    t.equal(deriveInputSchema(Type.String()), null);
    t.equal(deriveInputSchema(Type.Array(Type.String())), null);
    t.equal(effectiveInputSchema(code, { input: Type.String() }), null);
    t.strictSame(deriveSchema(Type.String()), { type: 'string' });
  });

  t.test('a self-referential input type is rejected', async (t) => {
    const Module = Type.Module({ Node: Type.Object({ next: Type.Optional(Type.Ref('Node')) }) });
    const cyclic: Record<string, unknown> = { type: 'object', properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    let deep: ReturnType<typeof Type.String> | ReturnType<typeof Type.Array> = Type.String();
    for (let i = 0; i < 50_000; i++) deep = Type.Array(deep);
    const types = {
      recursive: Type.Recursive((This) => Type.Object({ next: Type.Optional(This) })),
      ref: Type.Object({ other: Type.Ref('Elsewhere') }),
      module: Module.Import('Node'),
      graph: cyclic,
      overflow: deep,
    };
    for (const [name, type] of Object.entries(types)) {
      t.match(
        configError(() => deriveSchema(type as never)),
        'is self-referential',
        name,
      );
    }
    t.equal(
      configError(() =>
        deriveSchema(Type.Recursive((This) => Type.Object({ next: Type.Optional(This) }), { $id: 'Chain' })),
      ),
      'Sub-agent input type Chain (Object {next}) is self-referential, so it cannot be rendered as a JSON Schema ' +
        '(#/properties/next refers back to "Chain"). Declare an input schema explicitly, or use an input type without recursion.',
    );
  });

  t.test('a type used twice in one object is not mistaken for a self-reference', async (t) => {
    const Path = Type.String();
    t.strictSame(deriveSchema(Type.Object({ from: Path, to: Path })), {
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' } },
      required: ['from', 'to'],
    });
  });

  t.test('a type with a field JSON Schema cannot express is rejected with the remedy', async (t) => {
    t.equal(
      configError(() =>
        deriveSchema(Type.Object({ path: Type.String(), run: Type.Function([], Type.Void()) })),
      ),
      unrenderable('Object {path, run}', 'Function at #/properties/run has no JSON Schema form'),
    );
    const kinds = {
      Constructor: Type.Constructor([], Type.Object({})),
      Promise: Type.Promise(Type.String()),
      Symbol: Type.Symbol(),
      BigInt: Type.BigInt(),
      Date: Type.Date(),
      Undefined: Type.Undefined(),
      Void: Type.Void(),
      RegExp: Type.RegExp(/a/),
    };
    for (const [kind, field] of Object.entries(kinds)) {
      t.equal(
        configError(() => deriveSchema(Type.Object({ items: Type.Array(Type.Object({ x: field })) }))),
        unrenderable(
          'Object {items}',
          `${kind} at #/properties/items/items/properties/x has no JSON Schema form`,
        ),
        kind,
      );
    }
  });

  t.test('TypeBox containers render as the JSON Schema they already are', async (t) => {
    const type = Type.Object(
      {
        mode: Type.Union([Type.Literal('fast'), Type.Literal('slow')]),
        pair: Type.Tuple([Type.String(), Type.Number()]),
        tags: Type.Record(Type.String(), Type.Boolean()),
        any: Type.Optional(Type.Unknown()),
      },
      { additionalProperties: false },
    );
    t.strictSame(deriveSchema(type), {
      type: 'object',
      properties: {
        mode: {
          anyOf: [
            { type: 'string', const: 'fast' },
            { type: 'string', const: 'slow' },
          ],
        },
        pair: {
          type: 'array',
          items: [{ type: 'string' }, { type: 'number' }],
          additionalItems: false,
          maxItems: 2,
          minItems: 2,
        },
        tags: { type: 'object', patternProperties: { '^(.*)$': { type: 'boolean' } } },
        any: {},
      },
      required: ['mode', 'pair', 'tags'],
      additionalProperties: false,
    });
  });

  t.test('a ReAct agent without a declared input takes the default prompt schema', async (t) => {
    const expected =
      '{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"],"additionalProperties":false}';
    t.equal(JSON.stringify(DEFAULT_INPUT_SCHEMA), expected);
    t.equal(JSON.stringify(effectiveInputSchema(react)), expected);
    t.equal(JSON.stringify(effectiveInputSchema({ ...react, input: customSchema })), customSchema);
    t.strictSame(effectiveInputSchema({ ...react, input: Review }), deriveSchema(Review));
  });

  t.test('an output schema may be any JSON Schema object, explicit or derived', async (t) => {
    t.strictSame(effectiveOutputSchema({ ...react, output: '{"type":"string"}' }), { type: 'string' });
    t.strictSame(effectiveOutputSchema({ ...react, output: Type.Array(Type.String()) }), {
      type: 'array',
      items: { type: 'string' },
    });
    t.strictSame(effectiveOutputSchema({ ...code }, { output: Type.Object({ ok: Type.Boolean() }) }), {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    t.equal(effectiveOutputSchema(react), null);
    t.equal(
      configError(() => explicitSchema(' ')),
      'Sub-agent output schema must not be blank.',
    );
    t.equal(
      configError(() => explicitSchema('{')),
      'Sub-agent output schema must be valid JSON.',
    );
    t.equal(
      configError(() => explicitSchema('[1]')),
      'Sub-agent output schema must be a JSON Schema object.',
    );
    t.match(
      configError(() => effectiveOutputSchema({ ...react, output: Type.Date() })),
      /^Sub-agent output type Date cannot be rendered as a JSON Schema\. Declare an output schema explicitly/,
    );
  });

  t.test('the same declaration in YAML and in TypeBox yields byte-identical schemas', async (t) => {
    const yaml = `
input:
  type: object
  title: Review
  properties:
    path: {type: string, description: File to review.}
    lines: {type: integer, default: 0, minimum: 0}
    payload: {type: string, format: binary}
    tags:
      type: array
      items: {type: string}
      maxItems: 5
    mode:
      anyOf:
        - {type: string, const: fast}
        - {type: string, const: slow}
  required: [path, payload, tags]
  additionalProperties: false
`;
    const typebox = Type.Object(
      {
        path: Type.String({ description: 'File to review.' }),
        lines: Type.Integer({ minimum: 0, default: 0 }),
        payload: Type.Uint8Array(),
        tags: Type.Array(Type.String(), { maxItems: 5 }),
        mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('slow')])),
      },
      { title: 'Review', additionalProperties: false, $id: 'Review' },
    );
    const fromYaml = effectiveInputSchema({ ...react, input: parse(yaml).input });
    const fromTypeBox = effectiveInputSchema({ ...react, input: typebox });
    t.equal(JSON.stringify(fromTypeBox), JSON.stringify(fromYaml));
    t.equal(
      JSON.stringify(fromTypeBox),
      JSON.stringify(explicitInputSchema(JSON.stringify(parse(yaml).input))),
    );
  });
});

t.test('planToJSON and planFromJSON', async (t) => {
  /*
   * The plan JSON (upstream contracts 9 and 28 in docs/reference/upstream-contracts.md):
   * theDeclaredTypesStayOutOfThePlanJson,
   * theMetadataSerializesUnderTheCrossLanguageKeys, Python's "a derived input schema is carried by the
   * plan JSON", and descriptorRoundTripPreservesCallableMetadataAndChildPlan (as a whole-plan round trip:
   * there are no descriptors to rebuild, the plan JSON is what travels).
   */

  const agents: Record<string, AgentConfig> = {
    planner: {
      description: 'Splits a research question.',
      instructions: 'You plan {prompt} research.',
      model: 'default',
      tools: ['lookup'],
      subagents: ['researcher', 'reviewer'],
      maxIterations: 8,
      output: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    },
    researcher: { description: 'Answers one question.', model: 'default', tools: [], subagents: [] },
    reviewer: { module: './agents/reviewer.ts', tools: [], subagents: [] },
  };
  const plan: MeshPlan = buildPlan(mesh(agents), {
    tools: [
      {
        name: 'lookup',
        description: 'Looks up.',
        input: { type: 'object' },
        idempotent: true,
        source: 'native',
      },
    ],
    codeAgents: {
      reviewer: {
        input: Type.Object({ path: Type.String(), lines: Type.Integer({ default: 0 }) }, { $id: 'Review' }),
        output: Type.Object({ approved: Type.Boolean() }, { $id: 'Verdict' }),
      },
    },
  });

  /** Every key of every object in a JSON value. */
  function keysOf(value: unknown): string[] {
    if (Array.isArray(value)) return value.flatMap(keysOf);
    if (typeof value !== 'object' || value === null) return [];
    return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
  }

  /** The code of the MeshError planFromJSON throws for `text`. */
  function refusal(text: string): string {
    try {
      planFromJSON(text);
    } catch (e) {
      if (isMeshError(e)) return `${e.code}: ${e.message}`;
      throw e;
    }
    return 'accepted';
  }

  t.test('the plan round-trips through JSON without losing anything', async (t) => {
    const text = planToJSON(plan);
    const back = planFromJSON(text);
    t.strictSame(back, plan);
    t.equal(planToJSON(back), text);
    t.equal(back.agents.planner!.callables[1]!.description, 'Answers one question. This is subagent.');
    t.equal(
      JSON.stringify(back.agents.researcher!.inputSchema),
      '{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"],"additionalProperties":false}',
    );
  });

  t.test('the metadata serializes under the cross-language keys', async (t) => {
    const json = JSON.parse(planToJSON(plan));
    const planner = json.agents.planner;
    t.equal(planner.description, 'Splits a research question.');
    t.strictSame(planner.input_schema, plan.agents.planner!.inputSchema);
    t.strictSame(planner.output_schema, plan.agents.planner!.outputSchema);
    t.equal(planner.max_iterations, 8);
    t.equal(planner.definition_hash, plan.agents.planner!.definitionHash);
    t.equal(json.v, 1);
  });

  t.test('the declared types stay out of the plan JSON', async (t) => {
    const text = planToJSON(plan);
    const keys = new Set(keysOf(JSON.parse(text)));
    for (const key of [
      'inputSchema',
      'outputSchema',
      'inputType',
      'resultType',
      'input_type',
      'result_type',
      '$id',
    ]) {
      t.notOk(keys.has(key), `no ${key}`);
    }
    t.notMatch(text, 'TypeBox');
    t.notMatch(text, 'Review');
  });

  t.test('a derived input schema is carried by the plan JSON', async (t) => {
    const reviewer = JSON.parse(planToJSON(plan)).agents.reviewer;
    t.strictSame(reviewer.input_schema, {
      type: 'object',
      properties: { path: { type: 'string' }, lines: { type: 'integer', default: 0 } },
      required: ['path'],
    });
    t.strictSame(reviewer.output_schema, {
      type: 'object',
      properties: { approved: { type: 'boolean' } },
      required: ['approved'],
    });
  });

  t.test('planFromJSON refuses anything that is not a plan it wrote', async (t) => {
    t.equal(refusal('not json'), 'invalid_config: Plan JSON is not valid JSON.');
    t.match(refusal('[]'), /^invalid_config: Plan JSON is invalid at /);
    t.match(refusal('{"v":1,"agents":{"a":{}}}'), /^invalid_config: Plan JSON is invalid at \/agents\/a/);
    t.equal(refusal('{"v":2,"agents":{}}'), 'unsupported_version: Plan JSON has unknown version 2.');
    const json = JSON.parse(planToJSON(plan));
    json.agents.planner.description = 'Tampered.';
    t.equal(
      refusal(JSON.stringify(json)),
      'invalid_config: Plan JSON entry planner does not match its definition hash.',
    );
    const renamed = JSON.parse(planToJSON(plan));
    renamed.agents.other = renamed.agents.planner;
    t.equal(refusal(JSON.stringify(renamed)), 'invalid_config: Plan JSON entry other is named planner.');
    const extra = JSON.parse(planToJSON(plan));
    extra.agents.planner.inputSchema = {};
    t.match(refusal(JSON.stringify(extra)), /^invalid_config: Plan JSON is invalid at \/agents\/planner/);
    t.equal(refusal('{"v":1,"agents":{}}'), 'accepted');
  });
});

t.test('describePlanChange', async (t) => {
  // describePlanChange: a fork refused with plan_changed names what changed in the agent (docs/guides/durability.md).

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
});
