import { NAME_PATTERN } from '../defaults.js';
import { type ErrorDetail, MeshError } from '../errors/mesh-error.js';

/** One API key of `MESH_API_KEYS`, with the agents it may use (undefined = every agent). */
export interface ApiKey {
  readonly key: string;
  readonly agents: readonly string[] | undefined;
}

const NAME = new RegExp(NAME_PATTERN);
// Visible ASCII only: what an `Authorization: Bearer` header carries without quoting or trimming.
const KEY = /^[\x21-\x7e]+$/;

/**
 * Parses `MESH_API_KEYS`: a comma list of `key` or `key=agent1|agent2`. Undefined = auth off.
 * Every malformed entry is reported at once, by position and never by its text (it is a secret);
 * with `knownAgents`, a scope naming an unknown agent is an error too.
 */
export function parseApiKeys(raw: string | undefined, knownAgents?: readonly string[]): ApiKey[] | undefined {
  if (raw === undefined) return undefined;
  const problems: ErrorDetail[] = [];
  const keys: ApiKey[] = [];
  const seen = new Map<string, number>();
  if (raw.trim() === '') problems.push({ path: 'MESH_API_KEYS', message: 'is set but lists no key' });
  else
    raw.split(',').forEach((text, i) => {
      const path = `MESH_API_KEYS[${i}]`;
      const parsed = parseEntry(text.trim(), knownAgents);
      if (Array.isArray(parsed)) {
        for (const message of parsed) problems.push({ path, message });
        return;
      }
      const earlier = seen.get(parsed.key);
      if (earlier !== undefined)
        problems.push({ path, message: `repeats the key of MESH_API_KEYS[${earlier}]` });
      seen.set(parsed.key, i);
      keys.push(parsed);
    });
  if (problems.length > 0) {
    const lines = problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    throw new MeshError('invalid_config', `Invalid environment:\n${lines}`, problems);
  }
  return keys;
}

/** One entry, `key` or `key=agent1|agent2`, or the problems with it. */
function parseEntry(entry: string, knownAgents: readonly string[] | undefined): ApiKey | string[] {
  if (entry === '') return ['is empty (two commas in a row, or a trailing comma)'];
  const eq = entry.indexOf('=');
  const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
  if (key === '') return ['has no key before "="'];
  if (!KEY.test(key)) return ['the key may hold only visible ASCII characters, without spaces, "," or "="'];
  if (eq < 0) return Object.freeze({ key, agents: undefined });
  const agents = entry
    .slice(eq + 1)
    .split('|')
    .map((a) => a.trim());
  const problems: string[] = [];
  // Agents are named by position: a key holding "=" would otherwise be echoed in part.
  agents.forEach((agent, j) => {
    const which = `agent ${j + 1} of its scope`;
    if (agent === '') problems.push(`${which} is empty (write key=agent1|agent2)`);
    else if (!NAME.test(agent))
      problems.push(`${which} is not a valid agent name (a key may not contain "=")`);
    else if (knownAgents && !knownAgents.includes(agent))
      problems.push(`${which} is no agent of the config (agents: ${knownAgents.join(', ')})`);
  });
  return problems.length > 0 ? problems : Object.freeze({ key, agents: Object.freeze([...new Set(agents)]) });
}
