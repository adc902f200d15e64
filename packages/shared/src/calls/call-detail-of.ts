import type { AgentPlan } from '../plan/types.js';
import { buildConversation } from '../react/build-conversation.js';
import type { InvocationState } from '../store/invocation-state.js';
import { CALL_DETAIL_MAX_TEXT_BYTES, type CallDetail } from '../wire/call-detail.js';
import type { CallRecord } from '../wire/call-record.js';
import { cutLongText } from './cut-long-text.js';

// Linear: fixed prefixes, one digit run each, anchored.
const MODEL_CALL = /^t(\d+)-model$/;
const TOOL_CALL = /^t(\d+)-call(\d+)$/;

/** What a call's detail is built from: the invocation's state and records, and what they name. */
export interface CallDetailSource {
  state: InvocationState;
  records: readonly CallRecord[];
  callId: string;
  /** The agent's plan entry, when its definition is the one the invocation ran (else undefined). */
  agent: Pick<AgentPlan, 'instructions' | 'inputSchema' | 'outputSchema'> | undefined;
  /** A delegation's child invocation, when it exists. */
  child?: InvocationState | undefined;
}

/**
 * One call of an invocation with its content, rebuilt from the durable records (docs/guides/console.md): a
 * model call's messages (as buildConversation rebuilt them for it) and reply, a tool call's
 * arguments (from the reply that asked for it, or the approval request) and result, a
 * delegation's input and output (from the child); text past 256 KiB cut with `truncated: true`.
 * Undefined when the invocation has no such call.
 */
export function callDetailOf(src: CallDetailSource): CallDetail | undefined {
  const record = src.records.find((r) => r.callId === src.callId);
  if (!record) return undefined;
  const detail: CallDetail = {
    callId: record.callId,
    kind: record.kind,
    name: record.name,
    status: record.status,
    attempt: record.attempt ?? 1,
    request: {},
  };
  if (record.startedAt) detail.startedAt = record.startedAt;
  if (record.finishedAt) detail.finishedAt = record.finishedAt;
  if (record.runner) detail.runner = record.runner;
  if (record.error) detail.error = record.error;
  const approval = src.state.approvals.find((a) => a.request.callId === record.callId);
  if (approval?.decision) detail.decision = approval.decision;
  if (record.kind === 'model') describeModelCall(detail, record, src);
  else {
    const args = approval ? approval.request.args : argumentsOf(src.records, record.callId);
    if (args !== undefined) detail.request.arguments = args;
    if (record.status === 'succeeded' || record.status === 'rejected') {
      detail.result = { content: record.content ?? '' };
    }
    if (record.kind === 'subagent') describeDelegation(detail, record, src.child);
  }
  const cut = cutLongText(detail, CALL_DETAIL_MAX_TEXT_BYTES);
  return cut.truncated ? { ...(cut.value as CallDetail), truncated: true } : detail;
}

function describeModelCall(detail: CallDetail, record: CallRecord, src: CallDetailSource): void {
  const turn = Number(MODEL_CALL.exec(record.callId)?.[1] ?? Number.NaN);
  if (Number.isInteger(turn)) {
    // Without the definition it ran with, the system messages cannot be told: they are left out.
    const agent = src.agent ?? { instructions: undefined, inputSchema: null, outputSchema: null };
    if (!src.agent)
      detail.note = "The agent's definition changed since this call: its system messages are not shown.";
    const records = new Map(src.records.map((r) => [r.callId, r]));
    const messages = buildConversation(agent as AgentPlan, src.state.input, records, turn, src.state.history);
    detail.request.messages = src.agent ? messages : messages.filter((m) => m.role !== 'system');
  }
  const reply = record.reply;
  if (!reply) return;
  detail.result = { content: reply.content, toolCalls: reply.toolCalls };
  detail.usage = reply.usage;
}

function describeDelegation(
  detail: CallDetail,
  record: CallRecord,
  child: InvocationState | undefined,
): void {
  if (record.childId) detail.request.childId = record.childId;
  if (!child) return;
  detail.request.input = child.input;
  if (child.status === 'succeeded' && detail.result) detail.result.output = child.output;
}

/** The arguments the model wrote for tool call `callId`, parsed (the raw text when not JSON). */
function argumentsOf(records: readonly CallRecord[], callId: string): unknown {
  const m = TOOL_CALL.exec(callId);
  if (!m) return undefined;
  const reply = records.find((r) => r.callId === `t${m[1]}-model`)?.reply;
  const raw = reply?.toolCalls[Number(m[2])]?.arguments;
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
