import {
  type AgentContext,
  type ApprovalDecision,
  type CallRecord,
  type CodedError,
  codedError,
  type InvocationState,
  messageOf,
  type SessionContext,
  type SubagentResult,
  toolCallId,
} from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../../store/activation-store.js';
import { submitDelegations } from '../delegate.js';
import type { RunnerContext } from '../runner-context.js';

/** Builds the `ctx` a code agent's run receives for one replay. */
export function agentContext(
  replay: {
    subagent(name: string, input: unknown): Promise<SubagentResult>;
    step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
    approval(name: string, payload: unknown): Promise<ApprovalDecision>;
    memory: AgentContext['memory'];
  },
  signal: AbortSignal,
  log: AgentContext['log'],
  invocation?: Pick<InvocationState, 'session' | 'history'>,
): AgentContext {
  return {
    ...sessionContext(invocation),
    subagent: <T>(name: string, input: unknown) => replay.subagent(name, input) as Promise<SubagentResult<T>>,
    step: (name, fn) => replay.step(name, fn),
    approval: (name, payload) => replay.approval(name, payload),
    memory: replay.memory,
    signal,
    log,
  };
}

/** `ctx.session` of a root invocation of a session (docs/guides/sessions.md): frozen, messages included. */
function sessionContext(invocation?: Pick<InvocationState, 'session' | 'history'>): {
  session?: SessionContext;
} {
  if (!invocation?.session) return {};
  const messages = Object.freeze((invocation.history ?? []).map((m) => Object.freeze({ ...m })));
  return { session: Object.freeze({ id: invocation.session, messages }) };
}

/** A durable call of a code agent: the n-th call of its run, whatever kind. */
export function codeCallId(n: number): string {
  return toolCallId(0, n);
}

/** The failure a child's record carries, as `ctx.subagent` returns it. */
export function recordFailure(r: CallRecord): CodedError {
  return (
    r.error ??
    codedError(r.status === 'cancelled' ? 'cancelled' : 'subagent_failed', messageOf('subagent_failed'))
  );
}

/** Submits one delegation of a code agent (same path as a model's `_subagent_` call). */
export async function submitOne(
  ctx: RunnerContext,
  job: Job,
  activation: Activation,
  callId: string,
  name: string,
  input: Record<string, unknown>,
  memory: [key: string, valueJson: string][],
): Promise<void> {
  await submitDelegations(ctx, job, activation, [
    { kind: 'subagent', callId, name, providerId: '', args: input, memory },
  ]);
}
