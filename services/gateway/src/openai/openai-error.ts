import { isErrorCode, statusOf } from '@agentmesh/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** An error as OpenAI's API answers it, with the mesh's stable code (docs/reference/errors.md). */
export interface OpenAiErrorBody {
  error: { message: string; type: 'invalid_request_error' | 'server_error'; code: string };
}

/** The OpenAI error body of a mesh code and message: `invalid_request_error` for 4xx, else `server_error`. */
export function openAiError(code: string, message: string, status: number): OpenAiErrorBody {
  return { error: { message, type: status < 500 ? 'invalid_request_error' : 'server_error', code } };
}

/** The OpenAI error body of an invocation's coded error, with the status its code maps to. */
export function invocationError(error: { code: string; message: string }): {
  status: number;
  body: OpenAiErrorBody;
} {
  const status = isErrorCode(error.code) ? statusOf(error.code) : 500;
  return { status, body: openAiError(error.code, error.message, status) };
}

/**
 * An `onSend` hook for the /v1 routes: every error the gateway answers in its own shape
 * (`{"error": {code, message, details?}}`, from the error handler, auth, the body parser) leaves
 * in OpenAI's, so an OpenAI SDK reads its message and code.
 */
export async function toOpenAiErrors(
  _req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
  let body: { error?: { code?: unknown; message?: unknown; type?: unknown } };
  try {
    body = JSON.parse(payload) as typeof body;
  } catch {
    return payload;
  }
  const e = body?.error;
  if (typeof e?.code !== 'string' || typeof e.message !== 'string' || e.type !== undefined) return payload;
  return JSON.stringify(openAiError(e.code, e.message, reply.statusCode));
}
