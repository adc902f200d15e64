import { type ApprovalEntry, approvalsOf, pendingApprovals } from '../approvals/approval-fields.js';
import { MeshError } from '../errors/mesh-error.js';
import { compareCallIds } from '../ids.js';
import type { CallRecord } from '../wire/call-record.js';
import {
  type CodedError,
  type ForkedFrom,
  type InvocationStatus,
  type InvocationView,
  isTerminal,
} from '../wire/invocation-view.js';
import { decodeSessionHistory, type SessionMessage } from './session-message.js';
import { recordWithTexts } from './tree-texts.js';

/** An invocation's persisted state, decoded from its Redis hash. Times are epoch milliseconds. */
export interface InvocationState {
  v: 1;
  id: string;
  agent: string;
  status: InvocationStatus;
  input: unknown;
  output?: unknown;
  error?: CodedError;
  parentId?: string;
  parentCallId?: string;
  /** The parent's agent, for naming delegation events and metrics. */
  parentAgent?: string;
  rootId: string;
  depth: number;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  deadline: number;
  epoch: number;
  defHash: string;
  /** Which API key started it (a hash of the key), for visibility checks. */
  owner?: string;
  traceparent?: string;
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** The usage of its finished children's subtrees, added by each child's FINISH (docs/guides/approvals-and-budgets.md). */
  subModelCalls: number;
  subPromptTokens: number;
  subCompletionTokens: number;
  /** The tree's token budget (the root's, copied to every descendant); undefined = none. */
  budget?: number;
  recoveries: number;
  cancelRequested: boolean;
  /** Its calls' approvals, requested and decided (docs/guides/approvals-and-budgets.md). */
  approvals: ApprovalEntry[];
  /** The session a root invocation continues (docs/guides/sessions.md), and the history its model sees. */
  session?: string;
  history?: SessionMessage[];
  /** A fork's origin (docs/guides/durability.md). */
  forkedFrom?: ForkedFrom;
}

/** The hash fields of a new invocation (status `queued`). */
export function encodeNewInvocation(s: {
  id: string;
  agent: string;
  input: unknown;
  rootId: string;
  parentId?: string;
  parentCallId?: string;
  parentAgent?: string;
  depth: number;
  createdAt: number;
  deadline: number;
  defHash: string;
  owner?: string;
  traceparent?: string;
  cancelRequested?: boolean;
  budget?: number;
  forkedFrom?: ForkedFrom;
}): string[] {
  const f: Record<string, string> = {
    v: '1',
    id: s.id,
    agent: s.agent,
    status: 'queued',
    input: JSON.stringify(s.input),
    rootId: s.rootId,
    depth: String(s.depth),
    createdAt: String(s.createdAt),
    deadline: String(s.deadline),
    epoch: '0',
    defHash: s.defHash,
  };
  if (s.parentId) f.parentId = s.parentId;
  if (s.parentCallId) f.parentCallId = s.parentCallId;
  if (s.parentAgent) f.parentAgent = s.parentAgent;
  if (s.owner) f.owner = s.owner;
  if (s.traceparent) f.traceparent = s.traceparent;
  if (s.cancelRequested) f.cancelRequested = '1';
  if (s.budget !== undefined) f.budget = String(s.budget);
  if (s.forkedFrom) f.forkedFrom = JSON.stringify(s.forkedFrom);
  return Object.entries(f).flat();
}

const num = (v: string | undefined): number | undefined =>
  v === undefined || v === '' ? undefined : Number(v);

/**
 * Decodes an invocation hash; refuses an unknown version with `unsupported_version`. An output
 * stored as a tree text (store/tree-texts.ts) is read from `texts`; absent there, it is absent.
 */
export function decodeInvocation(
  h: Record<string, string>,
  texts?: ReadonlyMap<string, string>,
): InvocationState {
  if (h.v !== '1') throw new MeshError('unsupported_version', `Invocation state has unknown version ${h.v}.`);
  const s: InvocationState = {
    v: 1,
    id: h.id!,
    agent: h.agent!,
    status: h.status as InvocationStatus,
    input: JSON.parse(h.input ?? 'null'),
    rootId: h.rootId!,
    depth: Number(h.depth ?? 0),
    createdAt: Number(h.createdAt),
    deadline: Number(h.deadline),
    epoch: Number(h.epoch ?? 0),
    defHash: h.defHash ?? '',
    modelCalls: Number(h.modelCalls ?? 0),
    promptTokens: Number(h.promptTokens ?? 0),
    completionTokens: Number(h.completionTokens ?? 0),
    subModelCalls: Number(h.subModelCalls ?? 0),
    subPromptTokens: Number(h.subPromptTokens ?? 0),
    subCompletionTokens: Number(h.subCompletionTokens ?? 0),
    recoveries: Number(h.recoveries ?? 0),
    cancelRequested: h.cancelRequested === '1',
    approvals: approvalsOf(h),
  };
  const output = outputOf(h, texts);
  if (output !== undefined) s.output = output;
  if (h.error !== undefined) s.error = JSON.parse(h.error) as CodedError;
  if (h.parentId) s.parentId = h.parentId;
  if (h.parentCallId) s.parentCallId = h.parentCallId;
  if (h.parentAgent) s.parentAgent = h.parentAgent;
  if (h.owner) s.owner = h.owner;
  if (h.traceparent) s.traceparent = h.traceparent;
  if (h.session) s.session = h.session;
  const history = decodeSessionHistory(h.history);
  if (history) s.history = history;
  const forkedFrom = decodeForkedFrom(h.forkedFrom);
  if (forkedFrom) s.forkedFrom = forkedFrom;
  const budget = num(h.budget);
  if (budget !== undefined) s.budget = budget;
  const started = num(h.startedAt);
  if (started !== undefined) s.startedAt = started;
  const finished = num(h.finishedAt);
  if (finished !== undefined) s.finishedAt = finished;
  return s;
}

/** The output an invocation hash holds or refers to (outputFieldOf), or undefined. */
function outputOf(h: Record<string, string>, texts: ReadonlyMap<string, string> | undefined): unknown {
  if (h.output !== undefined) return JSON.parse(h.output);
  const text = h.outputTextRef === undefined ? undefined : texts?.get(h.outputTextRef);
  if (text !== undefined) return text;
  const json = h.outputRef === undefined ? undefined : texts?.get(h.outputRef);
  return json === undefined ? undefined : JSON.parse(json);
}

/** A fork's origin as stored (JSON); anything else is none. */
function decodeForkedFrom(text: string | undefined): ForkedFrom | undefined {
  if (text === undefined) return undefined;
  try {
    const f = JSON.parse(text) as Partial<ForkedFrom> | null;
    if (typeof f?.invocationId === 'string' && typeof f.callId === 'string')
      return { invocationId: f.invocationId, callId: f.callId };
  } catch {
    // written by the gateway only; unreadable reads as none, never a failed read
  }
  return undefined;
}

/** Decodes a calls hash into records ordered as they happened, their tree texts put back from `texts`. */
export function decodeCalls(h: Record<string, string>, texts?: ReadonlyMap<string, string>): CallRecord[] {
  const records = Object.values(h).map((text) => {
    const r = JSON.parse(text) as CallRecord;
    if (r.v !== 1) throw new MeshError('unsupported_version', `Call record has unknown version ${r.v}.`);
    return texts?.size ? recordWithTexts(r, texts) : r;
  });
  return records.sort((a, b) => compareCallIds(a.callId, b.callId));
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The public InvocationView of a state and its call records. */
export function toInvocationView(s: InvocationState, calls: CallRecord[]): InvocationView {
  const view: InvocationView = {
    id: s.id,
    agent: s.agent,
    status: s.status,
    input: s.input,
    rootId: s.rootId,
    createdAt: iso(s.createdAt),
    deadline: iso(s.deadline),
    usage: { modelCalls: s.modelCalls, promptTokens: s.promptTokens, completionTokens: s.completionTokens },
    treeUsage: {
      modelCalls: s.modelCalls + s.subModelCalls,
      promptTokens: s.promptTokens + s.subPromptTokens,
      completionTokens: s.completionTokens + s.subCompletionTokens,
    },
    calls: calls.map((r) => {
      const c: InvocationView['calls'][number] = {
        callId: r.callId,
        kind: r.kind,
        name: r.name,
        status: r.status,
      };
      c.startedAt = r.startedAt;
      if (r.finishedAt) c.finishedAt = r.finishedAt;
      if (r.childId) c.childId = r.childId;
      if (r.runner) c.runner = r.runner;
      if (r.attempt !== undefined && r.attempt > 1) c.attempt = r.attempt;
      if (r.reused) c.reused = true;
      if (r.resultGiven) c.resultGiven = true;
      return c;
    }),
    // A terminal invocation waits for nothing: its undecided approvals are moot.
    pendingApprovals: isTerminal(s.status) ? [] : pendingApprovals(s.approvals),
  };
  if (s.output !== undefined) view.output = s.output;
  if (s.error) view.error = s.error;
  if (s.parentId) view.parentId = s.parentId;
  if (s.startedAt !== undefined) view.startedAt = iso(s.startedAt);
  if (s.finishedAt !== undefined) view.finishedAt = iso(s.finishedAt);
  if (s.forkedFrom) view.forkedFrom = s.forkedFrom;
  return view;
}
