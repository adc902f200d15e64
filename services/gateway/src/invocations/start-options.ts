import type { AgentPlan, SessionMessage } from '@agentmesh/shared';
import type { Multitask } from '@agentmesh/shared/redis';

/** How a root invocation is started. */
export interface StartOptions {
  timeoutMs: number;
  waitMs: number;
  /** The wait also ends when some node of the tree waits on a human decision (REST `?wait`, docs/reference/rest-api.md). */
  untilDecision?: boolean;
  traceparent?: string | undefined;
  signal?: AbortSignal;
  /** The owner recorded on it (sha256 hex of the API key); undefined when auth is off. */
  owner?: string | undefined;
  /** The request's Idempotency-Key, already checked for its form. */
  idempotencyKey?: string | undefined;
  /** `?budget`: the tree's token budget; the agent's `maxTokens` applies too, the smaller wins. */
  budget?: number | undefined;
  /**
   * Earlier messages the root's model sees before its input, as a session's history (a chat
   * completion's, docs/guides/openai-compatible.md); not with `session`, whose own history stands.
   */
  history?: Pick<SessionMessage, 'role' | 'content'>[] | undefined;
  /** `?session` and `?multitask` (docs/guides/sessions.md): the conversation it continues, and how it waits its turn. */
  session?: { id: string; multitask: Multitask } | undefined;
  /**
   * Called once the invocation's id is known, before it is created (`fresh`) or rejoined (an
   * Idempotency-Key's): invoke?stream=true watches the tree from here, so its first deltas are
   * published (docs/guides/streaming.md). Its Redis writes must be sent before it first waits: on one
   * server a fresh invocation's writes follow them on the same connection without waiting for their
   * answers (Redis serves a connection in order), and its failure fails the create (taken back).
   * `start` settles only after it has.
   */
  beforeLaunch?: ((id: string, fresh: boolean) => Promise<void>) | undefined;
}

/** The tree's token budget: `?budget` and the agent's `maxTokens`, the smaller wins; none when neither. */
export function budgetOf(agent: AgentPlan, opts: StartOptions): { budget?: number } {
  const limits = [opts.budget, agent.maxTokens].filter((n): n is number => n !== undefined);
  return limits.length > 0 ? { budget: Math.min(...limits) } : {};
}

/**
 * What an Idempotency-Key's body hash covers: the input, and a chat completion's history with it
 * when it has one (the same last message after another conversation is another request).
 */
export function idempotentBody(input: unknown, opts: Pick<StartOptions, 'history'>): unknown {
  return opts.history?.length ? { input, history: opts.history } : input;
}
