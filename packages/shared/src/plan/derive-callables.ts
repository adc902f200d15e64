import { PlanError, type PlanProblem } from './plan-error.js';
import { type Callable, type JsonSchema, SUBAGENT_PREFIX, type ToolInfo } from './types.js';

/** What a parent needs to know of an agent to list it as a callable. */
export interface SubagentInfo {
  /** The routing description as declared ('' when absent). */
  description: string;
  /** Its effective input schema; null = no shape. */
  inputSchema: JsonSchema | null;
  /** Its own schema failed to build (reported against it), so parents skip the shape check. */
  invalid?: boolean;
}

/** Everything callables are built from: the tool catalogue and the declared agents, by name. */
export interface CallableSources {
  tools: ReadonlyMap<string, ToolInfo>;
  agents: ReadonlyMap<string, SubagentInfo>;
}

/** What one agent declares it may call. */
export interface DeclaredCallables {
  tools: readonly string[];
  subagents: readonly string[];
}

/**
 * The tool list an agent's model receives, built from scratch on every call (so a rebuild never
 * duplicates: upstream contract 14 in docs/reference/upstream-contracts.md): tools in declared order,
 * then one `_subagent_<name>` per sub-agent. Each entry is checked in upstream's order (contract 15):
 * duplicate callable name, then unknown agent, then (when `requireShape`, i.e. a model builds the
 * arguments) no input shape.
 * One bad entry fails the whole agent: throws a PlanError with every problem of the agent.
 */
export function deriveCallables(
  agent: string,
  declared: DeclaredCallables,
  sources: CallableSources,
  options: { requireShape?: boolean } = {},
): Callable[] {
  const requireShape = options.requireShape ?? true;
  const problems: PlanProblem[] = [];
  const callables: Callable[] = [];
  const seen = new Set<string>();
  declared.tools.forEach((name, i) => {
    const path = `/agents/${agent}/tools/${i}`;
    const tool = sources.tools.get(name);
    if (seen.has(name)) problems.push({ agent, path, message: `Duplicate callable name: ${name}` });
    else if (tool === undefined) problems.push({ agent, path, message: `Tool ${name} does not exist.` });
    else callables.push({ name, description: tool.description, parameters: structuredClone(tool.input) });
    seen.add(name);
  });
  declared.subagents.forEach((subagent, i) => {
    const name = SUBAGENT_PREFIX + subagent;
    const info = sources.agents.get(subagent);
    const problem = (message: string) =>
      problems.push({ agent, subagent, path: `/agents/${agent}/subagents/${i}`, message });
    if (seen.has(name)) problem(`Duplicate callable name: ${name}`);
    else if (info === undefined) problem(`Sub-agent ${subagent} is not a declared agent.`);
    else if (info.inputSchema !== null) {
      callables.push({
        name,
        description: subagentDescription(subagent, info.description),
        parameters: structuredClone(info.inputSchema),
      });
    } else if (requireShape && !info.invalid) {
      problem(
        `Sub-agent ${subagent} declares neither an input schema nor an input type, so there are no ` +
          'arguments for the model to build a call from.',
      );
    }
    seen.add(name);
  });
  if (problems.length > 0) throw new PlanError(problems);
  return callables;
}

/** The description a parent's model sees (upstream contract 16; a whitespace-only one is blank, as in Java). */
export function subagentDescription(name: string, description: string): string {
  const routing = description.trim() === '' ? `Delegate a standalone task to sub-agent ${name}` : description;
  return `${routing} This is subagent.`;
}
