import { type Static, Type } from '@sinclair/typebox';
import type { ErrorCode } from '../errors/error-codes.js';

/** The lifecycle of an invocation. */
export const InvocationStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('waiting'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type InvocationStatus = Static<typeof InvocationStatus>;

/** The statuses after which nothing changes. */
export const TERMINAL_STATUSES: readonly InvocationStatus[] = ['succeeded', 'failed', 'cancelled'];

/** True when the status is terminal. */
export function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * A coded error as persisted and shown: `{code, message}`. The code's type is the registry's union;
 * its wire schema stays a plain string, so the OpenAPI document and stored records are unchanged.
 */
export const CodedError = Type.Object({
  code: Type.Unsafe<ErrorCode>(Type.String()),
  message: Type.String(),
});
export type CodedError = Static<typeof CodedError>;

/** What a durable call is: a model call, a tool call, or a delegation. */
export const CallKind = Type.Union([Type.Literal('model'), Type.Literal('tool'), Type.Literal('subagent')]);
export type CallKind = Static<typeof CallKind>;

/**
 * A durable call's record: `started`, then an outcome (a cancelled call is not a failure). A call
 * that needs approval is `awaiting_approval` first, then `approved` (it runs next) or `rejected`.
 */
export const CallStatus = Type.Union([
  Type.Literal('awaiting_approval'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('started'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type CallStatus = Static<typeof CallStatus>;

/** One durable call as a user sees it in an InvocationView. */
export const CallView = Type.Object({
  callId: Type.String(),
  kind: CallKind,
  name: Type.String(),
  status: CallStatus,
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  childId: Type.Optional(Type.String()),
  runner: Type.Optional(Type.String()),
  attempt: Type.Optional(
    Type.Integer({
      minimum: 2,
      description: 'Present when the call was re-run after a crash: how many times it was started.',
    }),
  ),
  reused: Type.Optional(
    Type.Boolean({
      description:
        'A fork reused this call from the invocation it was forked from: its timings are those of the run in ' +
        "which it ran, and a delegation's `childId` is the original tree's child. Absent on live calls.",
    }),
  ),
  resultGiven: Type.Optional(
    Type.Boolean({ description: "The fork request gave this call's result: it never ran." }),
  ),
});
export type CallView = Static<typeof CallView>;

/** A call waiting for a human's approval, as the InvocationView lists it (docs/guides/approvals-and-budgets.md). */
export const PendingApproval = Type.Object({
  callId: Type.String(),
  name: Type.String({ description: "The callable (a tool, `_subagent_<name>`, or a code agent's name)." }),
  args: Type.Unknown({ description: 'The arguments of the call (a code agent: its payload).' }),
  requestedAt: Type.String({ format: 'date-time' }),
});
export type PendingApproval = Static<typeof PendingApproval>;

/** Where a fork comes from (docs/guides/durability.md): the node it was forked from and the call it runs live from. */
export const ForkedFrom = Type.Object(
  {
    invocationId: Type.String({ description: 'The invocation (any node of a tree) it was forked from.' }),
    callId: Type.String({ description: 'The call of that invocation it runs from.' }),
  },
  { description: 'Present on a fork: `POST /invocations/{id}/fork` started it.' },
);
export type ForkedFrom = Static<typeof ForkedFrom>;

/** What `GET /invocations/{id}` answers (docs/reference/rest-api.md). */
export const InvocationView = Type.Object(
  {
    id: Type.String(),
    agent: Type.String(),
    status: InvocationStatus,
    input: Type.Unknown(),
    output: Type.Optional(Type.Unknown()),
    error: Type.Optional(CodedError),
    parentId: Type.Optional(Type.String()),
    rootId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    deadline: Type.String({ format: 'date-time' }),
    usage: Type.Object({
      modelCalls: Type.Integer(),
      promptTokens: Type.Integer(),
      completionTokens: Type.Integer(),
    }),
    treeUsage: Type.Object(
      {
        modelCalls: Type.Integer(),
        promptTokens: Type.Integer(),
        completionTokens: Type.Integer(),
      },
      {
        description:
          'Its own usage plus that of every descendant that has finished (docs/guides/approvals-and-budgets.md).',
      },
    ),
    calls: Type.Array(CallView),
    pendingApprovals: Type.Array(PendingApproval, {
      description: 'The calls waiting for a decision (`POST /invocations/{id}/approvals/{callId}`).',
    }),
    forkedFrom: Type.Optional(ForkedFrom),
  },
  {
    title: 'InvocationView',
    description:
      'One invocation: its status, input, output or error, usage, and every durable call it made ' +
      '(a delegation with its `childId` from the moment it is submitted).',
  },
);
export type InvocationView = Static<typeof InvocationView>;

/** The JSON error body of every HTTP error answer. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'A stable snake_case code (docs/reference/errors.md).' }),
      message: Type.String({ description: 'What is wrong, for a human.' }),
      details: Type.Optional(
        Type.Array(
          Type.Object({
            path: Type.String({
              description: 'JSON pointer of the problem in the part named by the message.',
            }),
            message: Type.String(),
          }),
        ),
      ),
    }),
  },
  { title: 'ErrorBody', description: 'The body of every error answer.' },
);
