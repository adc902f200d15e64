import { SESSION_MAX_QUEUED } from '../defaults.js';
import type { AgentPlan } from '../plan/types.js';
import { userContent } from '../react/initial-messages.js';
import { isTerminal } from '../wire/invocation-view.js';
import { decodeInvocation, type InvocationState } from './invocation-state.js';
import type { SessionMessage } from './session-message.js';
import type { SessionStore } from './session-store.js';
import { readTreeTexts, textRefsIn } from './tree-texts.js';

/** What settling a session needs from the service that does it. */
export interface SessionStarter {
  /** The agent an invocation ran (its input schema renders the user message its model saw). */
  agent(name: string): Pick<AgentPlan, 'inputSchema'> | undefined;
  /** Adds the BullMQ job of a root invocation; adding it again does nothing (job id = invocation id). */
  start(agent: string, id: string, traceparent: string | undefined): Promise<void>;
}

// A current invocation that does not exist this long after it became current was bound by a
// request that died before creating it: the session goes on without it.
const ABANDONED_MS = 5000;

/**
 * Brings a session to a consistent state, whoever calls it and however often (docs/guides/sessions.md). The
 * finish of an invocation (its tree's hash tag) and the session's advance (the session's tag)
 * cannot be one atomic step, so: a session whose current invocation is found terminal advances now
 * (its exchange appended when it succeeded, the next queued one made current; SESSION_ADVANCE does
 * that once), and a current one still `queued` gets its history snapshot and its job (both
 * idempotent). Runners call it after each finish and when they find a session's invocation
 * terminal already; gateways before binding a new invocation, after a cancel, and on reads. A
 * runner killed between its finish and the session's advance so loses nothing and stalls nothing.
 */
export async function settleSession(
  sessions: SessionStore,
  id: string,
  starter: SessionStarter,
): Promise<void> {
  const { redis, keys } = sessions;
  // Each round advances past one invocation; the queue is bounded, so this ends.
  for (let round = 0; round < SESSION_MAX_QUEUED + 2; round++) {
    const meta = await sessions.meta(id);
    if (!meta || meta.current === '') return;
    const current = meta.current;
    const hash = await redis.hgetall(keys.invocation(current, current));
    if (!hash || Object.keys(hash).length === 0) {
      if (Date.now() - meta.currentSince < ABANDONED_MS) return; // its request may be creating it now
      await sessions.advance(id, current, [], true);
      continue;
    }
    // A large answer is the tree's text (tree-texts.ts); the session keeps a copy of its own.
    const texts = await readTreeTexts(redis, keys, current, textRefsIn(hash, []));
    const state = decodeInvocation(hash, texts);
    if (isTerminal(state.status)) {
      await sessions.advance(id, current, sessionExchange(state, starter.agent(state.agent)));
      continue;
    }
    if (state.status === 'queued') {
      // Its turn came: it sees every exchange before it, then runs.
      if (hash.history === undefined) {
        const history = await sessions.history(id);
        await redis.hsetnx(keys.invocation(current, current), 'history', JSON.stringify(history));
      }
      await starter.start(state.agent, current, state.traceparent);
    }
    return;
  }
}

/** What a finished invocation adds to its session: its user message and final answer if it succeeded. */
export function sessionExchange(
  state: InvocationState,
  agent: Pick<AgentPlan, 'inputSchema'> | undefined,
): SessionMessage[] {
  if (state.status !== 'succeeded') return [];
  const output = state.output;
  return [
    { role: 'user', content: userContent(agent?.inputSchema ?? null, state.input), invocationId: state.id },
    {
      role: 'assistant',
      content: typeof output === 'string' ? output : JSON.stringify(output ?? null),
      invocationId: state.id,
    },
  ];
}
