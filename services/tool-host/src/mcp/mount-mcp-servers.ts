import { dirname } from 'node:path';
import {
  ConfigError,
  type ConfigProblem,
  checkToolName,
  compileSchema,
  type Logger,
  type McpToolsEntry,
  type MeshConfig,
  NAME_PATTERN,
} from '@agentmesh/shared';
import type { LoadedTool } from '../load-tools.js';
import { DEFAULT_MCP_MAX_TOOLS } from './list-mcp-tools.js';
import type { McpConnection } from './mcp-connection.js';
import { MCP_TIMING, type McpTiming } from './mcp-timing.js';
import { mcpTool } from './mcp-tool.js';

/** The MCP servers the config mounts, connected, and the tools they serve. */
export interface MountedMcpServers {
  tools: LoadedTool[];
  servers: McpConnection[];
}

const NAME = new RegExp(NAME_PATTERN);

/**
 * Connects every `{mcp: …}` tools entry (in parallel) and turns each advertised tool into a served
 * one. Every problem at once — a server that cannot be started or reached, or whose tool list
 * passes its bounds (listMcpTools), a name that breaks the
 * name rule, takes the reserved prefix or is already `taken` — fails the start, naming the server
 * and the tool; the servers already connected are closed then.
 */
export async function mountMcpServers(
  config: MeshConfig,
  taken: Iterable<string>,
  log: Logger,
  timing: McpTiming = MCP_TIMING,
  /** Tools one server may list (MESH_MCP_MAX_TOOLS, docs/reference/bounds.md). */
  maxTools = DEFAULT_MCP_MAX_TOOLS,
): Promise<MountedMcpServers> {
  const mounts = config.tools.flatMap((entry, i) =>
    typeof entry === 'string' ? [] : [{ entry, path: `tools[${i}]` }],
  );
  if (mounts.length === 0) return { tools: [], servers: [] };
  // The MCP SDK loads only when the config mounts a server: its schemas cost every process that
  // imports it about 0.2 s of CPU at start.
  const { McpConnection } = await import('./mcp-connection.js');
  const servers = mounts.map(
    ({ entry, path }) => new McpConnection(entry.mcp, path, dirname(config.file), log, timing, maxTools),
  );
  const listed = await Promise.allSettled(servers.map((s) => s.start()));
  const problems: ConfigProblem[] = [];
  const names = new Set(taken);
  const tools: LoadedTool[] = [];
  for (const [i, result] of listed.entries()) {
    const { entry, path } = mounts[i]!;
    const server = servers[i]!;
    const fail = (message: string) => problems.push({ file: config.file, path, message });
    if (result.status === 'rejected') {
      fail((result.reason as Error).message);
      continue;
    }
    for (const advertised of result.value) {
      const tool = mcpTool(advertised, entry as McpToolsEntry, server);
      // The path already says which entry: the server is named by its own name.
      const by = `MCP server "${server.name}"`;
      const problem = nameProblem(tool.info.name, advertised.name, by, names);
      if (problem) fail(problem);
      for (const [what, schema] of [
        ['input', tool.info.input],
        ['output', tool.info.output],
      ] as const) {
        try {
          if (schema) compileSchema(schema);
        } catch (e) {
          fail(`tool ${advertised.name} of ${by}: ${what} schema: ${(e as Error).message}`);
        }
      }
      names.add(tool.info.name);
      tools.push(tool);
    }
  }
  if (problems.length > 0) {
    await Promise.all(servers.map((s) => s.close()));
    throw new ConfigError(problems);
  }
  return { tools, servers };
}

function nameProblem(
  name: string,
  advertised: string,
  server: string,
  taken: Set<string>,
): string | undefined {
  const as = name === advertised ? '' : ` as ${advertised}`;
  if (!NAME.test(name))
    return `Tool name ${JSON.stringify(name)} (advertised by ${server}${as}) must match ${NAME_PATTERN}.`;
  try {
    checkToolName(name, `${server}${as}`);
  } catch (e) {
    return (e as Error).message;
  }
  if (taken.has(name)) return `duplicate tool name "${name}" (advertised by ${server}${as})`;
  return undefined;
}
