import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Pages of `tools/list` read from one server at most (docs/reference/bounds.md). */
export const MAX_TOOL_PAGES = 100;

/** Tools one MCP server may list (MESH_MCP_MAX_TOOLS, docs/reference/bounds.md). */
export const DEFAULT_MCP_MAX_TOOLS = 1000;

/** A server's tool list the tool-host refuses: a config problem, not a connection to retry. */
export class ToolListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolListError';
  }
}

/**
 * Reads a server's whole tool list, page by page, within bounds: at most `maxTools` tools and
 * MAX_TOOL_PAGES pages, and a cursor given twice ends it (a server paging forever grew the
 * tool-host to 2.7 GB and it never listened). Past a bound it throws a ToolListError.
 */
export async function listMcpTools(
  client: Pick<Client, 'listTools'>,
  opts: { timeoutMs: number; maxTools: number },
): Promise<Tool[]> {
  const tools: Tool[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const answer = await client.listTools(cursor === undefined ? undefined : { cursor }, {
      timeout: opts.timeoutMs,
    });
    tools.push(...answer.tools);
    if (tools.length > opts.maxTools)
      throw new ToolListError(`it lists more than ${opts.maxTools} tools (MESH_MCP_MAX_TOOLS)`);
    cursor = answer.nextCursor;
    if (!cursor) return tools;
    if (cursors.has(cursor))
      throw new ToolListError(`tools/list gave the cursor ${JSON.stringify(cursor.slice(0, 100))} twice`);
    if (page >= MAX_TOOL_PAGES) throw new ToolListError(`tools/list goes on past ${MAX_TOOL_PAGES} pages`);
    cursors.add(cursor);
  }
}
