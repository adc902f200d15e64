import type { AgentPlan, JsonSchema } from '@agentmesh/shared';

/** How an agent's schemas appear on its MCP tool. */
export interface ToolSchemas {
  /** The tool's `inputSchema`: always an object schema, as MCP demands of tool arguments. */
  input: JsonSchema & { type: 'object' };
  /** The tool's `outputSchema`: the agent's own when it is an object schema, else none. */
  output: (JsonSchema & { type: 'object' }) | undefined;
  /**
   * True when the agent takes something other than an object: the tool's arguments are then
   * `{input: <the agent's input>}`, unwrapped before the agent is invoked.
   */
  wrapped: boolean;
}

const isObjectSchema = (s: JsonSchema): boolean => s.type === undefined || s.type === 'object';

/**
 * An agent's input and output schema as MCP can carry them (docs/guides/mcp.md). MCP tool arguments and
 * `structuredContent` are JSON objects: an agent without an input shape takes any object; one
 * whose input is not an object is offered as `{input}`; an output schema that is not an object's
 * is left out, and that output reaches the client as JSON text.
 */
export function toolSchemas(agent: AgentPlan): ToolSchemas {
  const declared = agent.inputSchema;
  const wrapped = declared !== null && !isObjectSchema(declared);
  const input = wrapped
    ? {
        type: 'object' as const,
        properties: { input: declared },
        required: ['input'],
        additionalProperties: false,
      }
    : { ...(declared ?? {}), type: 'object' as const };
  const out = agent.outputSchema;
  const output = out !== null && isObjectSchema(out) ? { ...out, type: 'object' as const } : undefined;
  return { input, output, wrapped };
}
