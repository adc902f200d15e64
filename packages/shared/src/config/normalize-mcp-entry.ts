import { formatPath, type PathSegment } from './config-path.js';
import { isRecord } from './is-record.js';
import type { ConfigProblem, McpToolsEntry } from './types.js';
import { urlProblems } from './url-problems.js';

/**
 * Shapes an `{mcp: …}` tools entry at `path`: a stdio server (`command`, `args` defaulting to [])
 * or a Streamable HTTP one (`url`, `headers`), never a mix; the schema checks the types.
 */
export function normalizeMcpEntry(
  entry: unknown,
  file: string,
  path: PathSegment[],
): { entry: McpToolsEntry; problems: ConfigProblem[] } {
  if (!isRecord(entry) || !isRecord(entry.mcp)) return { entry: entry as McpToolsEntry, problems: [] };
  const { command, args, env, url, headers } = entry.mcp;
  const at = (...more: PathSegment[]) => formatPath([...path, 'mcp', ...more]);
  const problems: ConfigProblem[] = [];
  const fail = (where: string, message: string) => problems.push({ file, path: where, message });
  let mcp: McpToolsEntry['mcp'];
  if (url === undefined) {
    if (command === undefined) fail(at(), 'give command (a stdio server) or url (a Streamable HTTP server)');
    if (headers !== undefined) fail(at('headers'), 'headers go with url (a Streamable HTTP server)');
    mcp = { ...entry.mcp, args: args ?? [] } as McpToolsEntry['mcp'];
  } else {
    if (command !== undefined)
      fail(at(), 'give either command (a stdio server) or url (a Streamable HTTP server), not both');
    if (command === undefined && args !== undefined)
      fail(at('args'), 'args go with command (a stdio server)');
    if (command === undefined && env !== undefined) fail(at('env'), 'env goes with command (a stdio server)');
    problems.push(...urlProblems(url, file, [...path, 'mcp', 'url']));
    mcp = { ...entry.mcp } as McpToolsEntry['mcp'];
  }
  return { entry: { ...entry, mcp } as McpToolsEntry, problems };
}
