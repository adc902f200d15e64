import { canonicalJson } from './canonical-json.js';
import type { AgentPlan } from './types.js';

/**
 * What an agent's definition hash covers, as one JSON object (its plan entry without the hash and
 * the root budget): stored under the hash (keys.definition) so a later change can be named.
 */
export function definitionOf(agent: AgentPlan): Record<string, unknown> {
  const { definitionHash: _hash, maxTokens: _budget, ...definition } = agent;
  return definition;
}

/**
 * Names what changed between an agent's definition as an invocation recorded it (undefined when
 * no longer known) and its definition now: the fields that differ, and for `tools`, `subagents`
 * and `callables` the names added and removed. The message of a fork's `plan_changed` (docs/guides/durability.md).
 */
export function describePlanChange(before: Record<string, unknown> | undefined, now: AgentPlan): string {
  const head = `The definition of agent ${now.name} changed since the invocation ran`;
  if (!before) return `${head} (the earlier definition is no longer known).`;
  const after = definitionOf(now);
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes = fields
    .filter((f) => canonicalJson(before[f] ?? null) !== canonicalJson(after[f] ?? null))
    .map((f) => describeField(f, before[f], after[f]));
  return changes.length === 0 ? `${head}.` : `${head}: ${changes.join('; ')}.`;
}

function describeField(field: string, was: unknown, is: unknown): string {
  if (field !== 'tools' && field !== 'subagents' && field !== 'callables') return `${field} changed`;
  const names = (v: unknown) =>
    new Set(
      Array.isArray(v)
        ? v.map((x) => (typeof x === 'string' ? x : String((x as { name?: unknown })?.name)))
        : [],
    );
  const [old, cur] = [names(was), names(is)];
  const added = [...cur].filter((n) => !old.has(n));
  const removed = [...old].filter((n) => !cur.has(n));
  const parts = [
    ...(added.length > 0 ? [`added ${added.join(', ')}`] : []),
    ...(removed.length > 0 ? [`removed ${removed.join(', ')}`] : []),
  ];
  return parts.length === 0 ? `${field} changed` : `${field} changed (${parts.join('; ')})`;
}
