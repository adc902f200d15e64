import type { CallKind, PendingApproval } from '../wire/invocation-view.js';

// A call's approval lives in its invocation's hash (docs/guides/approvals-and-budgets.md): it expires with the invocation,
// and the decision (DECIDE_APPROVAL) changes it and the call record in one step on one slot.

/** The hash field of a call's approval request: ApprovalRequest JSON. */
export const approvalField = (callId: string) => `approval:${callId}`;

/** The hash field of a call's decision: ApprovalDecisionRecord JSON, written once. */
export const decisionField = (callId: string) => `decision:${callId}`;

/** What a runner records when a call waits for approval. */
export interface ApprovalRequest {
  callId: string;
  /** `code` for a code agent's `ctx.approval()`. */
  kind: CallKind | 'code';
  /** The callable (`_subagent_<name>` for a delegation) or the code agent's name for it. */
  name: string;
  args: unknown;
  requestedAt: string;
}

/** A decision as the gateway records it. */
export interface ApprovalDecisionRecord {
  approved: boolean;
  reason?: string;
  decidedAt: string;
}

/** One approval of an invocation: its request and, once decided, the decision. */
export interface ApprovalEntry {
  request: ApprovalRequest;
  decision?: ApprovalDecisionRecord;
}

/** The approvals in an invocation's hash, in call order of their request time. */
export function approvalsOf(hash: Record<string, string>): ApprovalEntry[] {
  const out: ApprovalEntry[] = [];
  for (const [field, value] of Object.entries(hash)) {
    if (!field.startsWith('approval:')) continue;
    // Written by our own Lua steps; one that does not parse is skipped, never a failed read.
    const request = parsed<ApprovalRequest>(value);
    if (!request?.callId) continue;
    const decision = parsed<ApprovalDecisionRecord>(hash[decisionField(request.callId)]);
    out.push(decision ? { request, decision } : { request });
  }
  return out.sort((a, b) => (a.request.requestedAt < b.request.requestedAt ? -1 : 1));
}

function parsed<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The undecided approvals of a list, as the InvocationView shows them. */
export function pendingApprovals(entries: readonly ApprovalEntry[]): PendingApproval[] {
  return entries
    .filter((e) => !e.decision)
    .map(({ request: r }) => ({ callId: r.callId, name: r.name, args: r.args, requestedAt: r.requestedAt }));
}
