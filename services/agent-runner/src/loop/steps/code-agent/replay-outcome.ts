import { type CodedError, codedError } from '@agentmesh/shared';

/** How one replay of a code agent's run ended; `failed` is the mesh ending it (the deadline). */
export type ReplayOutcome =
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'failed'; error: CodedError }
  /** Our own durable work failed (Redis, fenced out, cancelled): for the activation to handle. */
  | { kind: 'crashed'; error: unknown }
  | { kind: 'blocked' };

/** What ends an invocation that runs past its deadline (same as a ReAct agent's). */
export const DEADLINE_EXCEEDED: CodedError = codedError('deadline_exceeded');

/** A promise that never settles: the answer of a call a later replay (or none) gives. */
export const never = <T>() => new Promise<T>(() => undefined);
