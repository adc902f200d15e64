/**
 * What a failed request to an MCP server means: an answer (the server's own error) or a failure of
 * the connection, and if so whether the request never reached the server (it can be sent again) or
 * is in doubt.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

// Failures that prove the request never reached the server: the call is not in doubt.
const REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * A failure of the connection rather than an answer: the server's own JSON-RPC errors and the
 * HTTP statuses it answers (a 404 is its lost session) are McpErrors and StreamableHTTPErrors.
 */
export function isTransportFailure(e: unknown): boolean {
  if (e instanceof McpError) return e.code === ErrorCode.ConnectionClosed;
  if (e instanceof StreamableHTTPError) return e.code === 404;
  return e instanceof TypeError || isRefused(e);
}

/** The request never reached the server: no process, no connection, or an unknown session. */
export function isRefused(e: unknown): boolean {
  if (e instanceof StreamableHTTPError) return e.code === 404;
  if (!(e instanceof Error)) return false;
  if (e.message === 'Not connected') return true;
  const code = (e.cause as { code?: string } | undefined)?.code;
  return code !== undefined && REFUSED.has(code);
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
