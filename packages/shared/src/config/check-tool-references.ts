import { namesOf } from './check-references.js';
import { ConfigError } from './config-error.js';
import { formatPath } from './config-path.js';
import type { ConfigProblem, MeshConfig } from './types.js';

/** Every tool an agent lists must be in the tool catalogue (`toolNames`); one problem per unknown entry. */
export function checkToolReferences(config: MeshConfig, toolNames: Iterable<string>): ConfigProblem[] {
  const known = new Set(toolNames);
  const problems: ConfigProblem[] = [];
  for (const [name, agent] of Object.entries(config.agents)) {
    agent.tools.forEach((tool, i) => {
      if (known.has(tool)) return;
      problems.push({
        file: config.file,
        path: formatPath(['agents', name, 'tools', i]),
        message: `unknown tool ${JSON.stringify(tool)} (catalogue: ${namesOf([...known])})`,
      });
    });
  }
  return problems;
}

/** Throws a `ConfigError` listing every tool an agent names that the catalogue lacks. */
export function assertToolReferences(config: MeshConfig, toolNames: Iterable<string>): void {
  const problems = checkToolReferences(config, toolNames);
  if (problems.length > 0) throw new ConfigError(problems);
}
