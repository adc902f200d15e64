/** One model endpoint of the config (`models:`). */
export interface ModelConfig {
  provider: 'openai';
  baseUrl: string;
  apiKey: string;
  model: string;
  /** In-flight calls to this model across all runners. */
  maxConcurrency?: number;
  /** Per-request timeout in milliseconds (default 120000). */
  timeoutMs?: number;
  /** Ask for a streamed reply (default true); false for a server that refuses `stream`. */
  stream?: boolean;
}

/** A tools entry: a module path (resolved against the config file) or a mounted MCP server. */
export type ToolsEntry = string | McpToolsEntry;

/** An MCP server the tool-host starts (stdio: `command`) or reaches (Streamable HTTP: `url`). */
export type McpServerConfig =
  | { command: string; args: string[]; env?: Record<string, string> }
  | { url: string; headers?: Record<string, string> };

/** A `tools` entry mounting an MCP server: its tools are served as `<prefix><name>`. */
export interface McpToolsEntry {
  mcp: McpServerConfig;
  prefix?: string;
  /** Overrides every tool's `idempotentHint` when given. */
  idempotent?: boolean;
  /** Each call's time limit in milliseconds (the tool-host's default when absent). */
  timeoutMs?: number;
}

/** A remote agent (`remote:`): reached over A2A through its agent card (docs/guides/a2a-and-remote-agents.md). */
export interface RemoteAgentConfig {
  /** The URL of its agent card. */
  a2a: string;
  /** Sent with every A2A request (card included), e.g. `authorization`: only to allowed origins. */
  headers?: Record<string, string>;
  /**
   * Origins (`https://host[:port]`) besides the card's own that the card may name for its interface
   * (and redirects may lead to); a request to any other origin is refused (docs/guides/mcp.md, docs/reference/bounds.md).
   */
  allowedOrigins?: string[];
}

/** One agent entry (`agents.<name>`), ReAct (instructions + model), code (`module:`) or remote (`remote:`). */
export interface AgentConfig {
  description?: string;
  remote?: RemoteAgentConfig;
  instructions?: string;
  model?: string;
  module?: string;
  tools: string[];
  subagents: string[];
  maxIterations?: number;
  /** The token budget of a tree this agent is the root of (docs/guides/approvals-and-budgets.md). */
  maxTokens?: number;
  /** Callables whose calls wait for a human's approval (docs/guides/approvals-and-budgets.md): tools or `_subagent_<name>`. */
  approvals?: string[];
  /** A JSON Schema mapping, a JSON string (parsed), or in mesh.config.ts a TypeBox type. */
  input?: unknown;
  output?: unknown;
}

/** The loaded, validated and frozen mesh config. */
export interface MeshConfig {
  /** Absolute path of the file it came from. */
  file: string;
  models: Record<string, ModelConfig>;
  toolHost: string;
  tools: ToolsEntry[];
  agents: Record<string, AgentConfig>;
}

/** One thing wrong with a config: the file, the path inside it (`agents.planner.tools[0]`, `(root)`), why. */
export interface ConfigProblem {
  file: string;
  path: string;
  message: string;
}

/** The environment `${VAR}` references are expanded from (passed in: the shared package never reads `process.env`). */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

/** How a config text is written. */
export type ConfigFormat = 'yaml' | 'json';
