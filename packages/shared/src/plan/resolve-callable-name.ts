import { SUBAGENT_PREFIX } from './types.js';

/** Where a callable name points: a sub-agent (by its registered name) or a tool. */
export type CallableTarget = { namespace: 'agent'; name: string } | { namespace: 'tool'; name: string };

/**
 * The one namespace a callable name resolves to, decided once from the prefix (upstream
 * contract 33, docs/reference/upstream-contracts.md): `_subagent_reviewer` is agent `reviewer`; `reviewer` is
 * tool `reviewer`, and a plain tool name never looks anything up among agents.
 */
export function resolveCallableName(name: string): CallableTarget {
  if (name.startsWith(SUBAGENT_PREFIX))
    return { namespace: 'agent', name: name.slice(SUBAGENT_PREFIX.length) };
  return { namespace: 'tool', name };
}
