import { deepFreeze } from './deep-freeze.js';
import type { MeshConfig, ToolsEntry } from './types.js';

const HIDDEN = '***';

/**
 * A copy of the config fit for logs: every non-empty `apiKey` and every MCP server `env` value
 * becomes `***` (an empty key stays '' so that "no key configured" remains visible).
 */
export function redactConfig(config: MeshConfig): MeshConfig {
  const models = Object.fromEntries(
    Object.entries(config.models).map(([name, model]) => [
      name,
      { ...model, apiKey: model.apiKey === '' ? '' : HIDDEN },
    ]),
  );
  const tools = config.tools.map((entry): ToolsEntry => {
    if (typeof entry === 'string' || entry.mcp.env === undefined) return entry;
    const env = Object.fromEntries(Object.keys(entry.mcp.env).map((key) => [key, HIDDEN]));
    return { mcp: { ...entry.mcp, env } };
  });
  return deepFreeze({ ...config, models, tools });
}
