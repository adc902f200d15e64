import type { SessionContext } from './store/session-message.js';
import type { CodedError } from './wire/invocation-view.js';

/** A minimal structured logger (pino-compatible subset). */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

/** What a tool's `run` receives beside its arguments. */
export interface ToolRunContext {
  invocationId: string;
  callId: string;
  agent: string;
  deadline: Date;
  idempotencyKey: string;
  signal: AbortSignal;
  log: Logger;
  /** W3C traceparent of the tool-host's `execute_tool` span (the caller's, tracing off), to pass on. */
  traceparent?: string;
}

/** A tool served by the tool-host. `input`/`output` are JSON Schemas or TypeBox types. */
export interface ToolDefinition<Args = unknown, Result = unknown> {
  name: string;
  description: string;
  input: unknown;
  output?: unknown;
  /** Safe to run again after a crash left its outcome unknown (docs/architecture/durability-and-fencing.md). */
  idempotent?: boolean;
  timeoutMs?: number;
  /** A human approves each call before it runs (docs/guides/approvals-and-budgets.md). */
  needsApproval?: boolean;
  run(args: Args, ctx: ToolRunContext): Promise<Result> | Result;
}

/** Adds typing to a tool definition; a plain object works the same. */
export function defineTool<Args = unknown, Result = unknown>(
  tool: ToolDefinition<Args, Result>,
): ToolDefinition<Args, Result> {
  return tool;
}

/** What `ctx.subagent()` returns: child failures come back as data, never as a throw. */
export type SubagentResult<T = unknown> = { ok: true; output: T } | { ok: false; error: CodedError };

/** What `ctx.approval()` returns: a human's decision on a pending approval (docs/guides/approvals-and-budgets.md). */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

/** Invocation-local memory of a code agent. */
export interface AgentMemory {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

/** What a code agent's `run` receives beside its input. */
export interface AgentContext {
  subagent<T = unknown>(name: string, input: unknown): Promise<SubagentResult<T>>;
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Asks a human to approve `name` with `payload`; the invocation waits (no worker) until decided. */
  approval(name: string, payload?: unknown): Promise<ApprovalDecision>;
  memory: AgentMemory;
  signal: AbortSignal;
  log: Logger;
  /** The session a root invocation continues (`?session=`, docs/guides/sessions.md), read-only; absent otherwise. */
  session?: SessionContext;
}

/** A code agent module's default export. */
export interface AgentDefinition<Input = unknown, Output = unknown> {
  input?: unknown;
  inputSchema?: unknown;
  output?: unknown;
  run(input: Input, ctx: AgentContext): Promise<Output> | Output;
}

/** Adds typing to a code agent definition; a plain object works the same. */
export function defineAgent<Input = unknown, Output = unknown>(
  agent: AgentDefinition<Input, Output>,
): AgentDefinition<Input, Output> {
  return agent;
}
