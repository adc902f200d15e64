import { MeshError } from '@agentmesh/shared';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The tool result of an MCP `tools/call` answer (docs/guides/mcp.md): its `structuredContent` when present,
 * else its text contents joined by newlines (a text resource counts as text; images, audio and
 * links are dropped). `isError` makes it a failed call (`tool_failed`) with that text as the reason.
 */
export function mcpCallResult(result: CallToolResult): unknown {
  const text = result.content
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'resource' && 'text' in part.resource) return part.resource.text;
      return undefined;
    })
    .filter((t): t is string => typeof t === 'string')
    .join('\n');
  if (result.isError)
    throw new MeshError('tool_failed', text || 'the MCP tool reported an error without a reason');
  if (result.structuredContent !== undefined) return result.structuredContent;
  return text;
}
