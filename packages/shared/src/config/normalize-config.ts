import { dirname, resolve } from 'node:path';
import { DEFAULT_TOOL_HOST } from '../defaults.js';
import { isRecord } from './is-record.js';
import { normalizeAgent } from './normalize-agent.js';
import { normalizeMcpEntry } from './normalize-mcp-entry.js';
import { resolveModulePath } from './resolve-module-path.js';
import type { AgentConfig, ConfigProblem, MeshConfig, ModelConfig } from './types.js';
import { urlProblems } from './url-problems.js';

/**
 * Turns a defaulted config tree into the final `MeshConfig` (absolute paths, default models, parsed
 * schemas) and reports the problems the schema cannot see. Tolerates trees that break the schema,
 * so that every problem is found in one pass; the result is only trusted when no problem was found.
 */
export function normalizeConfig(
  value: unknown,
  file: string,
): { config: MeshConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const root = isRecord(value) ? value : {};
  const absolute = resolve(file);
  const dir = dirname(absolute);
  const models = (isRecord(root.models) ? root.models : {}) as Record<string, ModelConfig>;
  for (const [name, model] of Object.entries(models)) {
    if (isRecord(model)) problems.push(...urlProblems(model.baseUrl, file, ['models', name, 'baseUrl']));
  }
  const toolHost = typeof root.toolHost === 'string' ? root.toolHost : DEFAULT_TOOL_HOST;
  problems.push(...urlProblems(toolHost, file, ['toolHost']));
  const tools = (Array.isArray(root.tools) ? root.tools : []).map((entry, i) => {
    if (typeof entry === 'string') return resolveModulePath(entry, dir);
    const mcp = normalizeMcpEntry(entry, file, ['tools', i]);
    problems.push(...mcp.problems);
    return mcp.entry;
  });
  const agents: Record<string, AgentConfig> = {};
  const ctx = { file, dir, models: Object.keys(models) };
  for (const [name, raw] of Object.entries(isRecord(root.agents) ? root.agents : {})) {
    if (!isRecord(raw)) continue;
    const normalized = normalizeAgent(name, raw, ctx);
    agents[name] = normalized.agent;
    problems.push(...normalized.problems);
  }
  return { config: { file: absolute, models, toolHost, tools, agents }, problems };
}
