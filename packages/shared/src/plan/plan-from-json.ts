import { Value } from '@sinclair/typebox/value';
import { MeshError } from '../errors/mesh-error.js';
import { isPlainObject } from './copy-json.js';
import { definitionHash } from './definition-hash.js';
import { type AgentPlanJson, PlanJson } from './plan-json.js';
import type { AgentPlan, MeshPlan } from './types.js';

/**
 * Reads a plan written by planToJSON. Not in the package barrel: no service exchanges plans; the
 * cross-language plan format is kept for the upstream contracts pinned in packages/shared/test/plan.test.ts. Refuses anything else with `invalid_config` (not JSON, wrong
 * shape, an entry whose hash does not match its definition) and an unknown version with
 * `unsupported_version`.
 */
export function planFromJSON(text: string): MeshPlan {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new MeshError('invalid_config', 'Plan JSON is not valid JSON.');
  }
  if (isPlainObject(data) && data.v !== undefined && data.v !== 1) {
    throw new MeshError('unsupported_version', `Plan JSON has unknown version ${JSON.stringify(data.v)}.`);
  }
  if (!Value.Check(PlanJson, data)) {
    const first = Value.Errors(PlanJson, data).First();
    throw new MeshError(
      'invalid_config',
      `Plan JSON is invalid at ${first?.path || '/'}: ${first?.message}.`,
    );
  }
  const agents: [string, AgentPlan][] = [];
  for (const [key, json] of Object.entries(data.agents)) {
    if (json.name !== key) {
      throw new MeshError('invalid_config', `Plan JSON entry ${key} is named ${json.name}.`);
    }
    const agent = agentFromJson(json);
    if (definitionHash(agent) !== agent.definitionHash) {
      throw new MeshError('invalid_config', `Plan JSON entry ${key} does not match its definition hash.`);
    }
    agents.push([key, agent]);
  }
  return { agents: Object.fromEntries(agents) };
}

function agentFromJson(j: AgentPlanJson): AgentPlan {
  return {
    name: j.name,
    kind: j.kind,
    description: j.description,
    ...(j.instructions !== undefined ? { instructions: j.instructions } : {}),
    ...(j.model !== undefined ? { model: j.model } : {}),
    ...(j.module !== undefined ? { module: j.module } : {}),
    tools: j.tools,
    subagents: j.subagents,
    maxIterations: j.max_iterations,
    ...(j.max_tokens !== undefined ? { maxTokens: j.max_tokens } : {}),
    inputSchema: j.input_schema,
    outputSchema: j.output_schema,
    callables: j.callables.map((c) => ({
      name: c.name,
      description: c.description,
      parameters: c.parameters,
    })),
    definitionHash: j.definition_hash,
  };
}
