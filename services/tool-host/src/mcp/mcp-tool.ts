import {
  DEFAULT_TOOL_TIMEOUT_MS,
  type JsonSchema,
  type McpToolsEntry,
  type ToolInfo,
} from '@agentmesh/shared';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { LoadedTool } from '../load-tools.js';
import { mcpCallResult } from './mcp-call-result.js';
import type { McpConnection } from './mcp-connection.js';

/** The tool-host's default time limit of a call, as run-tool applies it. */

/**
 * One tool an MCP server advertises, served like a native one (docs/guides/mcp.md): named with the entry's
 * prefix, its description, input and (when declared) output schema; `idempotent` from the entry,
 * else the tool's `idempotentHint`. Running it calls the server through `connection`.
 */
export function mcpTool(tool: Tool, entry: McpToolsEntry, connection: McpConnection): LoadedTool {
  const info: ToolInfo = {
    name: `${entry.prefix ?? ''}${tool.name}`,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    input: withoutDialect(tool.inputSchema),
    idempotent: entry.idempotent ?? tool.annotations?.idempotentHint === true,
    source: 'mcp',
  };
  if (tool.outputSchema) info.output = withoutDialect(tool.outputSchema);
  if (entry.timeoutMs !== undefined) info.timeoutMs = entry.timeoutMs;
  const timeoutMs = entry.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  return {
    info,
    run: async (args, ctx) => mcpCallResult(await connection.call(tool.name, args, ctx.signal, timeoutMs)),
  };
}

// `$schema` says which JSON Schema dialect a server's generator wrote; the mesh validates every
// schema with one validator, which refuses dialect URIs it does not know (2020-12), and models
// ignore it.
function withoutDialect(schema: object): JsonSchema {
  const { $schema: _, ...rest } = schema as JsonSchema;
  return rest;
}
