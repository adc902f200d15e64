import { deepFreeze } from './deep-freeze.js';
import type { MeshConfig, ToolsEntry } from './types.js';

const HIDDEN = '***';

/**
 * A copy of the config fit for logs: every non-empty `apiKey`, every MCP server `env` or `headers`
 * value and every remote agent's `headers` value becomes `***` (an empty key stays '' so that "no
 * key configured" remains visible).
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
  // Rebuilt only when there is something to hide: otherwise the agents are shared as they are.
  const remote = Object.values(config.agents).some((agent) => agent.remote?.headers);
  const agents = !remote
    ? config.agents
    : Object.fromEntries(
        Object.entries(config.agents).map(([name, agent]) => [
          name,
          agent.remote?.headers
            ? { ...agent, remote: { ...agent.remote, headers: hidden(agent.remote.headers) } }
            : agent,
        ]),
      );
  return deepFreeze({ ...config, models, tools, agents });
}

function hidden(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(values).map((key) => [key, HIDDEN]));
}
