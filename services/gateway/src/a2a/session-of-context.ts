import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { SESSION_ID_PATTERN } from '@agentmesh/shared';

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/**
 * The session an A2A message continues: its `contextId` (docs/guides/a2a-and-remote-agents.md, docs/guides/sessions.md). None when the message
 * has none (the SDK then makes one up for the task, which names no session). A contextId that
 * cannot be a session id is a malformed request (JSON-RPC -32602), like bad input.
 */
export function sessionOfContext(contextId: string | undefined): string | undefined {
  if (!contextId) return undefined;
  if (!SESSION_ID.test(contextId)) {
    throw new RequestMalformedError(`invalid_input: /message/contextId must match ${SESSION_ID_PATTERN}.`);
  }
  return contextId;
}
