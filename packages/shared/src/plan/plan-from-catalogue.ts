import { assertToolReferences } from '../config/check-tool-references.js';
import type { MeshConfig } from '../config/types.js';
import { buildPlan } from './build-plan.js';
import type { CodeAgentShape, MeshPlan, ToolInfo } from './types.js';

/**
 * The plan of a config against the tool catalogue the tool-host published, as the gateway and every
 * runner build it: a config naming a tool the catalogue lacks is a `ConfigError`.
 */
export function planFromCatalogue(
  config: MeshConfig,
  tools: readonly ToolInfo[],
  codeAgents: Readonly<Record<string, CodeAgentShape>> = {},
): MeshPlan {
  assertToolReferences(
    config,
    tools.map((t) => t.name),
  );
  return buildPlan(config, { tools, codeAgents });
}
