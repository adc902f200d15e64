import type { AgentPlanJson, PlanJson } from './plan-json.js';
import type { AgentPlan, MeshPlan } from './types.js';

/** The plan as JSON text (compact): everything kept, schemas as data, hashes included. */
export function planToJSON(plan: MeshPlan): string {
  const agents = Object.entries(plan.agents).map(([name, agent]) => [name, agentToJson(agent)]);
  const json: PlanJson = { v: 1, agents: Object.fromEntries(agents) };
  return JSON.stringify(json);
}

function agentToJson(a: AgentPlan): AgentPlanJson {
  return {
    name: a.name,
    kind: a.kind,
    description: a.description,
    ...(a.instructions !== undefined ? { instructions: a.instructions } : {}),
    ...(a.model !== undefined ? { model: a.model } : {}),
    ...(a.module !== undefined ? { module: a.module } : {}),
    tools: a.tools,
    subagents: a.subagents,
    max_iterations: a.maxIterations,
    ...(a.maxTokens !== undefined ? { max_tokens: a.maxTokens } : {}),
    input_schema: a.inputSchema,
    output_schema: a.outputSchema,
    callables: a.callables.map((c) => ({
      name: c.name,
      description: c.description,
      parameters: c.parameters,
    })),
    definition_hash: a.definitionHash,
  };
}
