import { createHash } from 'node:crypto';
import type { Message } from '@a2a-js/sdk';

/**
 * The Idempotency-Key an A2A message starts its invocation under: derived from its `messageId`,
 * so the same caller sending the same message again (a remote mesh's runner that crashed between
 * sending and recording the task) gets the task it already started, never a second run. Hashed:
 * a messageId may be any string, a key is printable and bounded; prefixed, so it cannot meet a
 * REST client's own keys by accident. None for a message without an id.
 */
export function messageIdempotencyKey(message: Message | undefined): string | undefined {
  const id = message?.messageId;
  if (typeof id !== 'string' || id === '') return undefined;
  return `a2a-message:${createHash('sha256').update(id).digest('hex')}`;
}
