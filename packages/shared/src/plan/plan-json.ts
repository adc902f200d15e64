import { type Static, Type } from '@sinclair/typebox';

/** A JSON Schema as data, or null where an agent has none. */
const SchemaJson = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

/** One callable as the model receives it. */
export const CallableJson = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    parameters: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export type CallableJson = Static<typeof CallableJson>;

/**
 * One agent in the plan JSON. Schema metadata sits under upstream's cross-language snake_case keys
 * `description`, `input_schema`, `output_schema` (upstream contract 9, docs/reference/upstream-contracts.md);
 * no TypeBox type is ever in it.
 */
export const AgentPlanJson = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    kind: Type.Union([Type.Literal('react'), Type.Literal('code'), Type.Literal('remote')]),
    description: Type.String(),
    instructions: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    module: Type.Optional(Type.String()),
    tools: Type.Array(Type.String()),
    subagents: Type.Array(Type.String()),
    max_iterations: Type.Integer({ minimum: 1 }),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    input_schema: SchemaJson,
    output_schema: SchemaJson,
    callables: Type.Array(CallableJson),
    definition_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type AgentPlanJson = Static<typeof AgentPlanJson>;

/** The serialized plan, versioned like everything persisted. */
export const PlanJson = Type.Object(
  {
    v: Type.Literal(1),
    agents: Type.Record(Type.String(), AgentPlanJson),
  },
  { additionalProperties: false },
);
export type PlanJson = Static<typeof PlanJson>;
