import { createHash } from 'node:crypto';
import { canonicalJson } from '@agentmesh/shared';

/** The sha256 (hex) of a call's arguments as canonical JSON: the same arguments, the same hash. */
export function argsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}
