import { randomUUID } from 'node:crypto';
import { type Message, type Part, Role, type SendMessageRequest } from '@a2a-js/sdk';

/** A message part of the A2A SDK's types, with only its content set. */
export const a2aPart = (content: Part['content']): Part => ({
  content,
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/**
 * A SendMessage request of the user with `parts` (a string is one text part), in the context
 * `contextId` ('' = none), with `configuration` (undefined = the server's defaults: blocking).
 */
export function a2aSend(
  parts: Part[] | string,
  opts: { contextId?: string; configuration?: SendMessageRequest['configuration'] } = {},
): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: opts.contextId ?? '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: typeof parts === 'string' ? [a2aPart({ $case: 'text', value: parts })] : parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    } satisfies Message,
    configuration: opts.configuration,
    metadata: undefined,
  };
}
