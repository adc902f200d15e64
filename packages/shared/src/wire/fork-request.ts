import { type Static, Type } from '@sinclair/typebox';

/** What a call id looks like in a request path or body: `t3-call1`, `t0-model`. */
export const CALL_ID_PATTERN = '^[A-Za-z0-9_.:-]{1,128}$';

/** The body of `POST /invocations/{id}/fork` (docs/guides/durability.md). */
export const ForkRequest = Type.Object(
  {
    fromCallId: Type.String({
      pattern: CALL_ID_PATTERN,
      description:
        "One of the invocation's `calls`: the fork reuses every call before it and runs live from it.",
    }),
    input: Type.Optional(
      Type.Unknown({
        description:
          "The fork's input instead of the invocation's, checked against the agent's input schema.",
      }),
    ),
    result: Type.Optional(
      Type.Unknown({
        description:
          'For a tool call or a delegation: its result (`null` too). The call is not run; the model gets this ' +
          'value (a string as is, anything else compact JSON) and the fork runs live after it.',
      }),
    ),
  },
  { additionalProperties: false, title: 'ForkRequest' },
);
export type ForkRequest = Static<typeof ForkRequest>;
