import { NAME_PATTERN } from '../defaults.js';
import { formatPath } from './config-path.js';
import type { ConfigProblem, MeshConfig } from './types.js';

const NAME = new RegExp(NAME_PATTERN);

/** Every model and sub-agent an agent names must exist in the same config (tools: see `checkToolReferences`). */
export function checkReferences(config: MeshConfig, file: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const modelNames = Object.keys(config.models);
  const agentNames = Object.keys(config.agents);
  for (const [name, agent] of Object.entries(config.agents)) {
    if (typeof agent.model === 'string' && !Object.hasOwn(config.models, agent.model)) {
      problems.push({
        file,
        path: formatPath(['agents', name, 'model']),
        message: `unknown model ${JSON.stringify(agent.model)} (models: ${namesOf(modelNames)})`,
      });
    }
    agent.subagents.forEach((subagent, i) => {
      // A malformed name is already reported by the schema; saying "unknown" too would only add noise.
      if (typeof subagent !== 'string' || !NAME.test(subagent) || Object.hasOwn(config.agents, subagent))
        return;
      problems.push({
        file,
        path: formatPath(['agents', name, 'subagents', i]),
        message: `unknown agent ${JSON.stringify(subagent)} (agents: ${namesOf(agentNames)})`,
      });
    });
  }
  return problems;
}

/** A list of names for a problem message, `none` when empty, cut after 20. */
export function namesOf(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, 20).join(', ');
  return names.length > 20 ? `${shown}, … ${names.length - 20} more` : shown;
}
