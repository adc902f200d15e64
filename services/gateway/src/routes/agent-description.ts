import type { AgentPlan, JsonSchema } from '@agentmesh/shared';

/** What `GET /agents/{name}` answers about an agent (and `GET /agents` about each). */
export interface AgentDescription {
  name: string;
  description: string;
  input: JsonSchema | null;
  output: JsonSchema | null;
  tools: string[];
  subagents: string[];
  callables: AgentPlan['callables'];
  /** The callables whose calls wait for a human's approval (docs/guides/approvals-and-budgets.md); absent when none. */
  approvals?: string[];
}

/** An agent as its description shows it. */
export function describeAgent(a: AgentPlan): AgentDescription {
  return {
    name: a.name,
    description: a.description,
    input: a.inputSchema,
    output: a.outputSchema,
    tools: a.tools,
    subagents: a.subagents,
    callables: a.callables,
    // Only when there are: the description's documented shape (docs/reference/rest-api.md) stays as it was otherwise.
    ...(a.approvals?.length ? { approvals: a.approvals } : {}),
  };
}

const schemaOrNull = (description: string): JsonSchema => ({
  type: ['object', 'boolean', 'null'],
  description,
});
const names = (description: string): JsonSchema => ({
  type: 'array',
  items: { type: 'string' },
  description,
});

/** The JSON Schema of an AgentDescription (a named component of the OpenAPI document). */
export const AgentDescriptionSchema: JsonSchema = {
  $id: 'AgentDescription',
  title: 'AgentDescription',
  description: 'An agent: its schemas, tools, sub-agents, and exactly the tool list its model receives.',
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string', description: "The routing description ('' when absent)." },
    input: schemaOrNull('The JSON Schema of its input; null when any input is accepted.'),
    output: schemaOrNull('The JSON Schema of its output; null when the output passes as it arrived.'),
    tools: names('Its tools, in declared order.'),
    subagents: names('The agents it may delegate to.'),
    approvals: names(
      "The callables whose calls wait for a human's approval (`approvals:` and tools with `needsApproval`); absent when none.",
    ),
    callables: {
      type: 'array',
      description: 'The tool list its model receives: tools first, then `_subagent_<name>`.',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          parameters: { type: 'object', description: 'The JSON Schema of its arguments.' },
        },
        required: ['name', 'description', 'parameters'],
      },
    },
  },
  required: ['name', 'description', 'input', 'output', 'tools', 'subagents', 'callables'],
};

/** The JSON Schema of `GET /agents`. */
export const AgentListSchema: JsonSchema = {
  type: 'object',
  properties: {
    agents: { type: 'array', items: { $ref: 'AgentDescription#' }, description: 'Those the caller may use.' },
  },
  required: ['agents'],
};
