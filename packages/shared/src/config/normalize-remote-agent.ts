import { formatPath } from './config-path.js';
import { isRecord } from './is-record.js';
import type { AgentConfig, ConfigProblem } from './types.js';
import { urlProblems } from './url-problems.js';

// Keys of a local agent: a remote one runs its own model and tools on its own mesh.
const LOCAL_ONLY = ['instructions', 'model', 'module', 'maxIterations', 'maxTokens'] as const;

// Bounds on `headers` and `allowedOrigins` (docs/reference/bounds.md: nothing unbounded), and the names the A2A
// client sets itself.
const MAX_HEADERS = 32;
const MAX_ORIGINS = 32;
const MAX_HEADER_VALUE = 8192;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'a2a-version',
]);

/**
 * Completes a remote agent entry (`remote: {a2a, headers?, allowedOrigins?}`, docs/guides/a2a-and-remote-agents.md) from
 * `raw` and reports what is wrong with it: the card URL must be http(s), headers bounded and
 * well-formed, each allowed origin an http(s) origin and nothing more, and no key of a local agent
 * may sit beside it. Its input and output schemas were read like any agent's.
 */
export function normalizeRemoteAgent(
  name: string,
  raw: Record<string, unknown>,
  agent: AgentConfig,
  file: string,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const report = (message: string, ...path: (string | number)[]) =>
    problems.push({ file, path: formatPath(['agents', name, ...path]), message });
  for (const key of LOCAL_ONLY)
    if (raw[key] !== undefined)
      report(`a remote agent (remote:) takes no ${key}: it runs on its own mesh`, key);
  for (const key of ['tools', 'subagents'] as const)
    if (Array.isArray(raw[key]) && raw[key].length > 0)
      report(`a remote agent (remote:) takes no ${key}: it runs on its own mesh`, key);
  if (!isRecord(raw.remote)) return problems; // the schema says what it should be
  const { a2a, headers, allowedOrigins } = raw.remote;
  if (typeof a2a === 'string') {
    problems.push(...urlProblems(a2a, file, ['agents', name, 'remote', 'a2a']));
    agent.remote = { a2a };
  }
  if (Array.isArray(allowedOrigins)) {
    if (allowedOrigins.length > MAX_ORIGINS)
      report(`at most ${MAX_ORIGINS} origins`, 'remote', 'allowedOrigins');
    allowedOrigins.slice(0, MAX_ORIGINS).forEach((origin, i) => {
      const problem = originProblem(origin);
      if (problem) report(problem, 'remote', 'allowedOrigins', i);
    });
    if (agent.remote) agent.remote.allowedOrigins = allowedOrigins.slice(0, MAX_ORIGINS) as string[];
  }
  if (!isRecord(headers)) return problems;
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) report(`at most ${MAX_HEADERS} headers`, 'remote', 'headers');
  for (const [key, value] of entries.slice(0, MAX_HEADERS)) {
    if (!TOKEN.test(key)) report('not a valid HTTP header name', 'remote', 'headers', key);
    else if (RESERVED.has(key.toLowerCase()))
      report('set by the A2A client itself; remove it', 'remote', 'headers', key);
    if (typeof value !== 'string') continue;
    if (value.length > MAX_HEADER_VALUE)
      report(`longer than ${MAX_HEADER_VALUE} characters`, 'remote', 'headers', key);
    // No CR, LF or NUL: a header value must not be able to start another header (or a body).
    else if (/[\r\n\0]/.test(value)) report('contains a line break or NUL', 'remote', 'headers', key);
  }
  if (agent.remote)
    agent.remote.headers = Object.fromEntries(entries.slice(0, MAX_HEADERS)) as Record<string, string>;
  return problems;
}

/** What is wrong with an allowed origin: it must be `http(s)://host[:port]` and nothing more. */
function originProblem(origin: unknown): string | undefined {
  if (typeof origin !== 'string') return undefined; // the schema says what it should be
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `not an origin: ${JSON.stringify(origin)}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `not an http(s) origin: ${JSON.stringify(origin)}`;
  if (url.origin !== origin.replace(/\/$/, ''))
    return `an origin is scheme://host[:port] only, as ${JSON.stringify(url.origin)}: ${JSON.stringify(origin)}`;
  return undefined;
}
