import { type Static, Type } from '@sinclair/typebox';
import { DEFAULT_TOOL_HOST, NAME_PATTERN } from '../defaults.js';

const Name = Type.String({ pattern: NAME_PATTERN });

const StringList = Type.Array(Name, { default: [] });

// A callable name: a tool's (NAME_PATTERN) or `_subagent_` and an agent's.
const CALLABLE_PATTERN = `^(_subagent_)?${NAME_PATTERN.replace(/^\^/, '')}`;

// `input` / `output`: a mapping (in mesh.config.ts possibly a TypeBox type) or a JSON string, parsed later.
const SchemaValue = Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], {
  description: 'a JSON Schema mapping or a JSON string',
});

const ModelEntry = Type.Object(
  {
    provider: Type.Literal('openai'),
    baseUrl: Type.String(),
    apiKey: Type.String(),
    model: Type.String(),
    maxConcurrency: Type.Optional(Type.Integer({ minimum: 1 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

// One object for both kinds of MCP server, so a mistake is reported by normalizeMcpEntry in the
// config author's words ("give either command or url") rather than as a failed union.
const McpServer = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    url: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);

const McpEntry = Type.Object(
  {
    mcp: McpServer,
    prefix: Type.Optional(Type.String()),
    idempotent: Type.Optional(Type.Boolean()),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

const ToolsEntry = Type.Union([Type.String(), McpEntry], {
  description: 'a module path, {mcp: {command, args?, env?}} or {mcp: {url, headers?}}',
});

// A remote agent over A2A; normalizeRemoteAgent checks the URLs and bounds the headers.
const RemoteEntry = Type.Object(
  {
    a2a: Type.String({ description: 'the URL of the agent card' }),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String(), { description: "origins besides the card's its interface may be on" }),
    ),
  },
  { additionalProperties: false },
);

const AgentEntry = Type.Object(
  {
    description: Type.Optional(Type.String()),
    remote: Type.Optional(RemoteEntry),
    instructions: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    module: Type.Optional(Type.String()),
    tools: Type.Optional(StringList),
    subagents: Type.Optional(StringList),
    maxIterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    // Callables whose calls wait for a human (docs/guides/approvals-and-budgets.md): tool names or `_subagent_<name>`.
    approvals: Type.Optional(Type.Array(Type.String({ pattern: CALLABLE_PATTERN }), { maxItems: 256 })),
    input: Type.Optional(SchemaValue),
    output: Type.Optional(SchemaValue),
  },
  { additionalProperties: false },
);

/**
 * The mesh config as written in `mesh.yaml` / `mesh.config.ts`. The `default`s document what
 * `normalizeConfig` fills in; references between entries are checked apart from the schema.
 */
export const MeshConfigSchema = Type.Object(
  {
    models: Type.Optional(Type.Record(Type.String(), ModelEntry, { default: {} })),
    toolHost: Type.Optional(Type.String({ default: DEFAULT_TOOL_HOST })),
    tools: Type.Optional(Type.Array(ToolsEntry, { default: [] })),
    agents: Type.Record(Name, AgentEntry, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/** The mesh config as written. */
export type MeshConfigSchema = Static<typeof MeshConfigSchema>;
