/** A JSON Schema as plain data (never a TypeBox type: those carry symbols). */
export type JsonSchema = { [key: string]: unknown };

/**
 * The prefix of every sub-agent callable; tools may not use it (upstream contract 1,
 * docs/reference/upstream-contracts.md).
 */
export const SUBAGENT_PREFIX = '_subagent_';

/** What a model receives for one tool or sub-agent: an OpenAI function definition. */
export interface Callable {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** One entry of the tool-host's catalogue: what the gateway and runners know of a tool. */
export interface ToolInfo {
  name: string;
  description: string;
  input: JsonSchema;
  output?: JsonSchema;
  idempotent: boolean;
  timeoutMs?: number;
  /** Each call waits for a human's approval (docs/guides/approvals-and-budgets.md); absent = false. */
  needsApproval?: boolean;
  /** `native` for a TypeScript tool, `mcp` for one a mounted MCP server advertises. */
  source: 'native' | 'mcp';
}

/** What a code-agent module exports (`defineAgent(...)`), as far as the plan is concerned. */
export interface CodeAgentShape {
  /** A TypeBox type (derived, canonicalized) or a plain JSON Schema object / JSON string (explicit). */
  input?: unknown;
  /** An explicit JSON Schema (object or JSON string); wins over `input`. */
  inputSchema?: unknown;
  output?: unknown;
}

/** One agent of the resolved plan: everything a service needs to expose or run it. Serializable. */
export interface AgentPlan {
  name: string;
  /** `remote`: an agent of another mesh, reached over A2A (its config entry says where). */
  kind: 'react' | 'code' | 'remote';
  /** The routing description as declared ('' when absent): shown to parents' models only. */
  description: string;
  /** ReAct only: the agent's own system prompt. */
  instructions?: string;
  /** ReAct only: the name of the model entry it calls. */
  model?: string;
  /** Code agents: the module path, resolved against the config file. */
  module?: string;
  tools: string[];
  subagents: string[];
  maxIterations: number;
  /** The callables whose calls wait for a human's approval (its `approvals:` and tools that need it); absent = none. */
  approvals?: string[];
  /** The token budget of a tree this agent is the root of; not part of the definition hash. */
  maxTokens?: number;
  /** The effective input schema: explicit, derived, or (ReAct) the default prompt schema; null = no shape. */
  inputSchema: JsonSchema | null;
  /** The declared output schema; null = the output passes as it arrived. */
  outputSchema: JsonSchema | null;
  /** Exactly the tool list this agent's model receives: tools in declared order, then `_subagent_<name>`. */
  callables: Callable[];
  /** sha256 over the agent's definition and its callables; a runner refuses to replay another hash. */
  definitionHash: string;
}

/** The whole resolved plan: every agent by name. */
export interface MeshPlan {
  agents: Record<string, AgentPlan>;
}
