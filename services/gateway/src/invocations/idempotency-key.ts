import type { IncomingHttpHeaders } from 'node:http';
import { type JsonSchema, MeshError } from '@agentmesh/shared';

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

/** What the invoke operations say of the header, in their description and on the parameter. */
export const IDEMPOTENCY_KEY_TEXT =
  'Header `Idempotency-Key` (optional): the same key for the same agent with the same API key answers ' +
  'the same invocation and never starts a second run; the same key with another body answers 422 ' +
  `\`idempotency_key_reused\`. Keys are kept for MESH_RETENTION_SECONDS and ${RULE}.`;

/** The header as the OpenAPI document declares it (`idempotencyKeyOf` checks the same rule). */
export const IdempotencyKeyHeader: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description: IDEMPOTENCY_KEY_TEXT,
};
