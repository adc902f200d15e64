/*
 * The plan JSON (upstream contracts 9 and 28 in docs/reference/upstream-contracts.md):
 * theDeclaredTypesStayOutOfThePlanJson,
 * theMetadataSerializesUnderTheCrossLanguageKeys, Python's "a derived input schema is carried by the
 * plan JSON", and descriptorRoundTripPreservesCallableMetadataAndChildPlan (as a whole-plan round trip:
 * there are no descriptors to rebuild, the plan JSON is what travels).
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import type { AgentConfig, MeshConfig } from '../src/config/types.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { buildPlan } from '../src/plan/build-plan.js';
import { planFromJSON } from '../src/plan/plan-from-json.js';
import { planToJSON } from '../src/plan/plan-to-json.js';
import type { MeshPlan } from '../src/plan/types.js';

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
const config: MeshConfig = {
  file: '/srv/mesh.yaml',
  models: { default: { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '', model: 'm' } },
  toolHost: 'http://127.0.0.1:3002',
  tools: [],
  agents,
};
const plan: MeshPlan = buildPlan(config, {
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
