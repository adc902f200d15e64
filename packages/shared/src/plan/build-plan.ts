import type { AgentConfig, MeshConfig } from '../config/types.js';
import { DEFAULT_MAX_ITERATIONS } from '../defaults.js';
import { isMeshError } from '../errors/mesh-error.js';
import { checkToolName } from './check-tool-name.js';
import { definitionHash } from './definition-hash.js';
import { deriveCallables, type SubagentInfo } from './derive-callables.js';
import { effectiveInputSchema, effectiveOutputSchema } from './effective-schema.js';
import { findCycles } from './find-cycles.js';
import { PlanError, type PlanProblem } from './plan-error.js';
import type { AgentPlan, Callable, CodeAgentShape, JsonSchema, MeshPlan, ToolInfo } from './types.js';

/** What the plan is built from besides the config: the tool catalogue and the loaded code-agent modules. */
export interface PlanDeps {
  tools: readonly ToolInfo[];
  /** Code-agent module exports by agent name; a missing one declares nothing. */
  codeAgents?: Readonly<Record<string, CodeAgentShape>>;
}

/**
 * The resolved plan of a mesh: every agent's schemas, callables and definition hash. Collects every
 * problem of every agent (reserved tool names, schemas that do not build, bad tool and sub-agent
 * entries, cycles) and throws them all at once as one PlanError (`invalid_config`).
 */
export function buildPlan(config: MeshConfig, deps: PlanDeps): MeshPlan {
  const problems: PlanProblem[] = [];
  const tools = new Map<string, ToolInfo>();
  for (const tool of deps.tools) {
    tools.set(tool.name, tool);
    collect(problems, { path: '/tools' }, () =>
      checkToolName(tool.name, tool.source === 'mcp' ? 'an MCP server' : undefined),
    );
  }
  const agents = Object.entries(config.agents);
  const schemas = new Map<string, { input: JsonSchema | null; output: JsonSchema | null }>();
  const infos = new Map<string, SubagentInfo>();
  const perAgent = new Map<string, PlanProblem[]>(agents.map(([name]) => [name, []]));
  for (const [name, agent] of agents) {
    const code = deps.codeAgents?.[name];
    const own = perAgent.get(name)!;
    const input = collect(own, { agent: name, path: `/agents/${name}/input` }, () =>
      effectiveInputSchema(agent, code),
    );
    const output = collect(own, { agent: name, path: `/agents/${name}/output` }, () =>
      effectiveOutputSchema(agent, code),
    );
    schemas.set(name, { input: input ?? null, output: output ?? null });
    infos.set(name, {
      description: agent.description ?? '',
      inputSchema: input ?? null,
      invalid: input === undefined,
    });
  }
  const callables = new Map<string, Callable[]>();
  for (const [name, agent] of agents) {
    try {
      const built = deriveCallables(name, agent, { tools, agents: infos }, { requireShape: isReact(agent) });
      // a code agent has no model: it calls its sub-agents itself, with arguments it builds (docs/reference/configuration.md)
      callables.set(name, isReact(agent) ? built : []);
    } catch (e) {
      if (!(e instanceof PlanError)) throw e;
      perAgent.get(name)!.push(...e.problems);
    }
  }
  for (const own of perAgent.values()) problems.push(...own);
  const graph = Object.fromEntries(agents.map(([name, agent]) => [name, agent.subagents]));
  for (const cycle of findCycles(graph)) {
    const agent = cycle[0]!;
    const message = `Cyclic sub-agent definition detected: ${cycle.join(' -> ')}`;
    problems.push({ agent, path: `/agents/${agent}/subagents`, message });
  }
  if (problems.length > 0) throw new PlanError(problems);
  // fromEntries, not assignment: `__proto__` is a legal agent name
  const entries = agents.map(([name, agent]) => [
    name,
    planEntry(name, agent, schemas.get(name)!, callables.get(name)!, approvalsOf(agent, tools)),
  ]);
  return { agents: Object.fromEntries(entries) };
}

function planEntry(
  name: string,
  agent: AgentConfig,
  schemas: { input: JsonSchema | null; output: JsonSchema | null },
  callables: Callable[],
  approvals: string[],
): AgentPlan {
  const entry: Omit<AgentPlan, 'definitionHash'> = {
    name,
    kind: agent.remote ? 'remote' : isReact(agent) ? 'react' : 'code',
    description: agent.description ?? '',
    ...(isReact(agent) && agent.instructions !== undefined ? { instructions: agent.instructions } : {}),
    ...(isReact(agent) && agent.model !== undefined ? { model: agent.model } : {}),
    ...(agent.module !== undefined ? { module: agent.module } : {}),
    tools: [...agent.tools],
    subagents: [...agent.subagents],
    maxIterations: agent.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    inputSchema: schemas.input,
    outputSchema: schemas.output,
    callables,
    ...(approvals.length > 0 ? { approvals } : {}),
  };
  const budget = agent.maxTokens !== undefined ? { maxTokens: agent.maxTokens } : {};
  return { ...entry, ...budget, definitionHash: definitionHash(entry) };
}

/** The callables of a ReAct agent that wait for approval: its `approvals:` and its tools that say so. */
function approvalsOf(agent: AgentConfig, tools: ReadonlyMap<string, ToolInfo>): string[] {
  if (!isReact(agent) || agent.remote) return [];
  const listed = new Set(agent.approvals ?? []);
  for (const t of agent.tools) if (tools.get(t)?.needsApproval) listed.add(t);
  return [...listed];
}

function isReact(agent: AgentConfig): boolean {
  return agent.module === undefined;
}

/** Runs one check; a config error becomes a problem at `where` (and the result undefined). */
function collect<T>(
  problems: PlanProblem[],
  where: Omit<PlanProblem, 'message'>,
  check: () => T,
): T | undefined {
  try {
    return check();
  } catch (e) {
    if (!isMeshError(e, 'invalid_config')) throw e;
    problems.push({ ...where, message: e.message });
    return undefined;
  }
}
