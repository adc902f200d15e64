import type { IncomingHttpHeaders } from 'node:http';
import { MeshError } from '@agentmesh/shared';

// 1–255 printable ASCII characters (space included; HTTP trims it at the ends).
const FORM = /^[\x20-\x7e]{1,255}$/;
const RULE = 'must be 1 to 255 printable ASCII characters';

/** The request's `Idempotency-Key`, undefined when absent; 400 `invalid_input` when malformed. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && FORM.test(raw)) return raw;
  throw new MeshError('invalid_input', `Invalid header: Idempotency-Key ${RULE}.`, [
    { path: '/Idempotency-Key', message: RULE },
  ]);
}

/**
 * The header, as the invoke operations describe it (in prose: the operation's documented
 * parameters are its query parameters).
 */
export const IDEMPOTENCY_KEY_TEXT =
  'Header `Idempotency-Key` (optional): the same key for the same agent with the same API key answers ' +
  'the same invocation and never starts a second run; the same key with another body answers 422 ' +
  `\`idempotency_key_reused\`. Keys are kept for MESH_RETENTION_SECONDS and ${RULE}.`;
