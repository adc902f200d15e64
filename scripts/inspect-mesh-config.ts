import { resolve } from 'node:path';
import {
  buildPlan,
  ConfigError,
  type ConfigProblem,
  checkToolReferences,
  isMeshError,
  loadCodeAgents,
  loadConfig,
  type MeshConfig,
  PlanError,
} from '@agentmesh/shared';
import { loadTools } from '@agentmesh/tool-host';

/** What a start would find in the config: each problem once, and what it is made of. */
export interface ConfigInspection {
  /** One line per problem, `<file>: <path>: <reason>` (a plan's: `agent <name>: <reason>`). */
  problems: string[];
  /** The config file, its tools modules and its code agents' modules (absolute paths). */
  roots: { config: string; tools: string[]; agents: string[] };
  /** The tool names its modules define (MCP servers' tools are not known before they start). */
  tools: string[];
  /** Those tools as the catalogue lists them (JSON): what runners build their plans from. */
  catalogue: string;
  /** The config's `tools` entries (JSON): what the tool-host is started from. */
  toolEntries: string;
  /** The config names MCP servers: whose tools only the tool-host knows once it started them. */
  mcp: boolean;
  /** The agents in the config's order, each with its input schema once the plan was built (else null). */
  agents: { name: string; input: Record<string, unknown> | null }[];
}

/**
 * Checks the config `env` names as the services will at start: the file itself, its code agents'
 * and tools modules (imported), the tools every agent names, and the plan (callables, cycles,
 * approvals). A config that mounts MCP servers has its tool names checked by the tool-host, which
 * starts those servers. Never throws for a problem of the config: it is in `problems`.
 */
export async function inspectMeshConfig(env: NodeJS.ProcessEnv): Promise<ConfigInspection> {
  const file = resolve(env.MESH_CONFIG || './mesh.yaml');
  const inspection: ConfigInspection = {
    problems: [],
    roots: { config: file, tools: [], agents: [] },
    tools: [],
    catalogue: '[]',
    toolEntries: '[]',
    mcp: false,
    agents: [],
  };
  let config: MeshConfig;
  try {
    config = await loadConfig(file, env);
  } catch (e) {
    return { ...inspection, problems: linesOf(e) };
  }
  const modules = config.tools.filter((entry): entry is string => typeof entry === 'string');
  const isPath = (f: string) => f.startsWith('/');
  inspection.roots.tools = modules.filter(isPath);
  inspection.roots.agents = Object.values(config.agents).flatMap((a) =>
    a.module && isPath(a.module) ? [a.module] : [],
  );
  inspection.agents = Object.keys(config.agents).map((name) => ({ name, input: null }));
  inspection.toolEntries = JSON.stringify(config.tools);
  inspection.mcp = modules.length < config.tools.length;
  const problems = inspection.problems;
  let codeAgents = {};
  try {
    codeAgents = await loadCodeAgents(config);
  } catch (e) {
    problems.push(...linesOf(e));
  }
  let tools: Awaited<ReturnType<typeof loadTools>> = [];
  try {
    tools = await loadTools(config);
  } catch (e) {
    problems.push(...linesOf(e));
  }
  const infos = tools.map((x) => x.info).sort((a, b) => (a.name < b.name ? -1 : 1));
  inspection.tools = infos.map((x) => x.name);
  inspection.catalogue = JSON.stringify(infos);
  if (problems.length === 0 && !inspection.mcp) {
    const unknown = checkToolReferences(config, inspection.tools);
    problems.push(...unknown.map(lineOf));
    if (unknown.length === 0) {
      try {
        const plan = buildPlan(config, { tools: infos, codeAgents });
        for (const agent of inspection.agents) agent.input = plan.agents[agent.name]?.inputSchema ?? null;
      } catch (e) {
        problems.push(...linesOf(e));
      }
    }
  }
  return inspection;
}

function lineOf(p: ConfigProblem): string {
  return `${p.file}: ${p.path}: ${p.message}`;
}

function linesOf(e: unknown): string[] {
  if (e instanceof ConfigError) return e.problems.map(lineOf);
  if (e instanceof PlanError || isMeshError(e, 'invalid_config')) return (e as Error).message.split('\n');
  return [(e as Error)?.message ?? String(e)];
}
