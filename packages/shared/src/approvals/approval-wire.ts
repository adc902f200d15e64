import { type Static, Type } from '@sinclair/typebox';
import { PendingApproval } from '../wire/invocation-view.js';

/** The body of `POST /invocations/{id}/approvals/{callId}` (docs/guides/approvals-and-budgets.md). */
export const ApprovalDecisionBody = Type.Object(
  {
    approved: Type.Boolean({ description: 'true runs the call; false tells the model it was not approved.' }),
    reason: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: 'Why (a rejection): the model reads it in the tool message.',
      }),
    ),
  },
  { additionalProperties: false, title: 'ApprovalDecision' },
);
export type ApprovalDecisionBody = Static<typeof ApprovalDecisionBody>;

/** One line of `GET /approvals`: a pending approval and where it waits. */
export const ApprovalItem = Type.Object({
  invocationId: Type.String({ description: 'The invocation that asks (any node of a tree).' }),
  rootId: Type.String(),
  agent: Type.String(),
  ...PendingApproval.properties,
});
export type ApprovalItem = Static<typeof ApprovalItem>;

/** A page of `GET /approvals`. */
export const ApprovalPage = Type.Object(
  {
    items: Type.Array(ApprovalItem, { description: 'Newest first by `requestedAt`.' }),
    nextCursor: Type.Optional(
      Type.String({ description: 'Pass as `cursor` for the next page; absent on the last page.' }),
    ),
  },
  { title: 'ApprovalPage' },
);
export type ApprovalPage = Static<typeof ApprovalPage>;
