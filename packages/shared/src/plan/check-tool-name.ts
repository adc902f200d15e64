import { MeshError } from '../errors/mesh-error.js';
import { SUBAGENT_PREFIX } from './types.js';

/**
 * Refuses a tool name in the sub-agent namespace (upstream contract 31,
 * docs/reference/upstream-contracts.md), wherever the name comes from: a native tool, the catalogue, or
 * a name a mounted MCP server advertises (`source`, e.g. `MCP server files`), which fails at
 * discovery rather than being skipped. Throws `invalid_config`.
 */
export function checkToolName(name: string, source?: string): void {
  if (!name.startsWith(SUBAGENT_PREFIX)) return;
  const from = source === undefined ? '' : ` (advertised by ${source})`;
  throw new MeshError(
    'invalid_config',
    `Tool name ${name} must not start with the reserved prefix '${SUBAGENT_PREFIX}'${from}.`,
  );
}
