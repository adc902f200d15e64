import { ConfigError } from './config/config-error.js';
import type { ConfigProblem, MeshConfig } from './config/types.js';
import { importModule } from './import-module.js';
import type { CodeAgentShape } from './plan/types.js';

/** A code agent module's default export, as loaded (its `run` is the agent). */
export interface LoadedCodeAgent extends CodeAgentShape {
  run: (input: unknown, ctx: unknown) => unknown;
}

/** Imports every code agent module the config names (`agents.<name>.module`); every problem at once. */
export async function loadCodeAgents(config: MeshConfig): Promise<Record<string, LoadedCodeAgent>> {
  const problems: ConfigProblem[] = [];
  const agents: Record<string, LoadedCodeAgent> = {};
  for (const [name, agent] of Object.entries(config.agents)) {
    if (!agent.module) continue;
    const path = `agents.${name}.module`;
    try {
      const mod = await importModule(agent.module);
      const def = mod.default as Partial<LoadedCodeAgent> | undefined;
      if (!def || typeof def.run !== 'function') {
        problems.push({
          file: config.file,
          path,
          message: `${agent.module} must default-export {run(input, ctx)}`,
        });
        continue;
      }
      agents[name] = def as LoadedCodeAgent;
    } catch (e) {
      problems.push({
        file: config.file,
        path,
        message: `cannot load ${agent.module}: ${(e as Error).message}`,
      });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return agents;
}
