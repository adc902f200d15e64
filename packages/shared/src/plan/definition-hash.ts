import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { AgentPlan } from './types.js';

/**
 * The sha256 (hex) of an agent's plan entry without its hash, callables included, as canonical
 * JSON: it changes whenever anything its model or its callers would observe changes.
 */
export function definitionHash(
  entry: Omit<AgentPlan, 'definitionHash'> & { definitionHash?: string },
): string {
  const { definitionHash: _ignored, ...definition } = entry;
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
