// The shapes of the mesh's REST answers that the console reads (docs/reference/rest-api.md, docs/guides/approvals-and-budgets.md, docs/guides/streaming.md, docs/guides/console.md).

export type InvocationStatus = 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';
export type CallKind = 'model' | 'tool' | 'subagent';

export interface Usage {
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
}

export interface CallView {
  callId: string;
  kind: CallKind;
  name: string;
  status: string;
  startedAt?: string;
  finishedAt?: string;
  childId?: string;
  runner?: string;
  attempt?: number;
  /** A fork reused it from the invocation it was forked from (docs/guides/durability.md). */
  reused?: boolean;
  /** The fork request gave its result: it never ran. */
  resultGiven?: boolean;
}

export interface PendingApproval {
  callId: string;
  name: string;
  args: unknown;
  requestedAt: string;
}

export interface InvocationView {
  id: string;
  agent: string;
  status: InvocationStatus;
  input: unknown;
  output?: unknown;
  error?: { code: string; message: string };
  parentId?: string;
  rootId: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  deadline: string;
  usage: Usage;
  treeUsage: Usage;
  calls: CallView[];
  pendingApprovals: PendingApproval[];
  /** A fork's origin (docs/guides/durability.md). */
  forkedFrom?: { invocationId: string; callId: string };
}

export type InvocationSummary = Omit<InvocationView, 'input' | 'output' | 'calls' | 'pendingApprovals'>;

export interface MeshEvent {
  invocationId: string;
  parentId?: string;
  parentCallId?: string;
  agent: string;
  type: string;
  at: string;
  data: unknown;
}

export interface Callable {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export type JsonSchema = { [key: string]: unknown };

export interface AgentDescription {
  name: string;
  description: string;
  input: JsonSchema | null;
  output: JsonSchema | null;
  tools: string[];
  subagents: string[];
  callables: Callable[];
  approvals?: string[];
}

export interface CallDetail {
  callId: string;
  kind: CallKind;
  name: string;
  status: string;
  attempt: number;
  startedAt?: string;
  finishedAt?: string;
  runner?: string;
  request: { messages?: ChatMessage[]; arguments?: unknown; input?: unknown; childId?: string };
  result?: {
    content?: string | null;
    toolCalls?: { id: string; name: string; arguments: string }[];
    output?: unknown;
  };
  error?: { code: string; message: string };
  usage?: { promptTokens: number; completionTokens: number };
  decision?: { approved: boolean; reason?: string; decidedAt: string };
  note?: string;
  truncated?: true;
}

export interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export const TERMINAL: readonly string[] = ['succeeded', 'failed', 'cancelled'];
export const isTerminal = (status: string): boolean => TERMINAL.includes(status);
