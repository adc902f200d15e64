import { type Static, Type } from '@sinclair/typebox';
import { SESSION_MAX_HISTORY_CHARS } from '../defaults.js';

/** One message of a session's history: the user message or final answer of a succeeded invocation. */
export const SessionMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String(),
    invocationId: Type.String({ description: 'The invocation the message belongs to.' }),
  },
  { additionalProperties: false },
);
export type SessionMessage = Static<typeof SessionMessage>;

/** The session an invocation belongs to, as a code agent reads it (`ctx.session`, frozen). */
export interface SessionContext {
  readonly id: string;
  readonly messages: readonly Readonly<SessionMessage>[];
}

/**
 * The newest messages whose contents fit in `maxChars`, dropping whole exchanges from the oldest
 * end (a message list grows by user + assistant pairs), so a model never receives half of one.
 */
export function boundHistory(
  messages: SessionMessage[],
  maxChars = SESSION_MAX_HISTORY_CHARS,
): SessionMessage[] {
  let total = 0;
  let start = messages.length;
  while (start >= 2) {
    const size = messages[start - 1]!.content.length + messages[start - 2]!.content.length;
    if (total + size > maxChars) break;
    total += size;
    start -= 2;
  }
  return start === 0 ? messages : messages.slice(start);
}

/** Decodes a history stored as JSON (a list of messages); anything else is no history. */
export function decodeSessionHistory(text: string | undefined): SessionMessage[] | undefined {
  if (text === undefined || text === '') return undefined;
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? (parsed as SessionMessage[]) : undefined;
}
