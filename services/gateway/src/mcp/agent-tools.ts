import type { MeshPlan } from '@agentmesh/shared';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import { toolSchemas } from './tool-schemas.js';

/** The MCP tools `caller` may call: one per agent in its API key's scope, in config order (docs/guides/mcp.md). */
export function agentTools(plan: MeshPlan, caller: Caller): Tool[] {
  return Object.values(plan.agents)
    .filter((a) => caller.mayUse(a.name))
    .map((a) => {
      const { input, output } = toolSchemas(a);
      return {
        name: a.name,
        ...(a.description ? { description: a.description } : {}),
        inputSchema: input,
        ...(output ? { outputSchema: output } : {}),
      };
    });
}
