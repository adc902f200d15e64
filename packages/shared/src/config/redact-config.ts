import { deepFreeze } from './deep-freeze.js';
import type { MeshConfig, ToolsEntry } from './types.js';

const HIDDEN = '***';

/**
 * A copy of the config fit for logs: every non-empty `apiKey` and every MCP server `env` or `headers` value
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
    if (typeof entry === 'string') return entry;
    const server = entry.mcp;
    if ('env' in server && server.env !== undefined)
      return { ...entry, mcp: { ...server, env: hidden(server.env) } };
    if ('headers' in server && server.headers !== undefined) {
      return { ...entry, mcp: { ...server, headers: hidden(server.headers) } };
    }
    return entry;
  });
  return deepFreeze({ ...config, models, tools });
}

function hidden(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(values).map((key) => [key, HIDDEN]));
}
