import { DEFAULT_MAX_ITERATIONS } from '../defaults.js';
import { compileSchema } from '../json/compile-schema.js';
import { type JsonSchema, SUBAGENT_PREFIX } from '../plan/types.js';
import { namesOf } from './check-references.js';
import { formatPath } from './config-path.js';
import { isRecord } from './is-record.js';
import { normalizeApprovals } from './normalize-approvals.js';
import { normalizeRemoteAgent } from './normalize-remote-agent.js';
import { resolveModulePath } from './resolve-module-path.js';
import type { AgentConfig, ConfigProblem } from './types.js';

/** What an agent entry is read against: the file, its directory, the names of the configured models. */
export interface AgentContext {
  file: string;
  dir: string;
  models: string[];
}

// Keys only a ReAct agent takes; a code agent (`module:`) runs its own code and calls sub-agents only.
const REACT_ONLY = ['instructions', 'model', 'maxIterations'] as const;

/**
 * Builds one agent's final entry (default model and iteration limit, schemas parsed, module path
 * resolved) and reports what is wrong with it. `raw` may break the schema: that is reported elsewhere.
 */
export function normalizeAgent(
  name: string,
  raw: Record<string, unknown>,
  ctx: AgentContext,
): { agent: AgentConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const report = (message: string, ...path: (string | number)[]) =>
    problems.push({ file: ctx.file, path: formatPath(['agents', name, ...path]), message });
  const tools = Array.isArray(raw.tools) ? (raw.tools as string[]) : [];
  const subagents = Array.isArray(raw.subagents) ? (raw.subagents as string[]) : [];
  const agent: AgentConfig = { tools, subagents };
  if (typeof raw.maxTokens === 'number') agent.maxTokens = raw.maxTokens;
  for (const key of ['description', 'instructions'] as const)
    if (typeof raw[key] === 'string') agent[key] = raw[key];
  for (const key of ['input', 'output'] as const) {
    if (raw[key] === undefined) continue;
    const parsed = parseSchema(raw[key], key);
    if (typeof parsed === 'string') report(parsed, key);
    else {
      agent[key] = parsed.schema;
      const invalid = schemaCompileProblem(parsed.schema);
      if (invalid) report(invalid, key);
    }
  }
  reportRepeats(tools, 'tools', report);
  reportRepeats(subagents, 'subagents', report);
  tools.forEach((tool, i) => {
    if (typeof tool === 'string' && tool.startsWith(SUBAGENT_PREFIX)) {
      report(`tool names may not start with "${SUBAGENT_PREFIX}" (reserved for sub-agents)`, 'tools', i);
    }
  });
  const react = raw.remote === undefined && typeof raw.module !== 'string';
  const approvals = normalizeApprovals(name, raw, { tools, subagents, react }, ctx.file);
  problems.push(...approvals.problems);
  if (approvals.approvals) agent.approvals = approvals.approvals;
  if (raw.remote !== undefined) {
    problems.push(...normalizeRemoteAgent(name, raw, agent, ctx.file));
    return { agent, problems };
  }
  if (typeof raw.module === 'string') {
    agent.module = resolveModulePath(raw.module, ctx.dir);
    for (const key of REACT_ONLY) {
      if (raw[key] !== undefined)
        report(`only a ReAct agent takes ${key}; this one is a code agent (module)`, key);
    }
    if (tools.length > 0)
      report('only a ReAct agent takes tools; this one is a code agent (module)', 'tools');
    return { agent, problems };
  }
  agent.maxIterations = typeof raw.maxIterations === 'number' ? raw.maxIterations : DEFAULT_MAX_ITERATIONS;
  const model = typeof raw.model === 'string' ? raw.model : defaultModel(ctx.models);
  if (model !== undefined) agent.model = model;
  else if (raw.model === undefined) report(`required (models: ${namesOf(ctx.models)})`, 'model');
  return { agent, problems };
}

// The model an agent gets without `model:`: the one named `default`, else the only one.
function defaultModel(models: string[]): string | undefined {
  if (models.includes('default')) return 'default';
  return models.length === 1 ? models[0] : undefined;
}

// A schema given as a JSON string is parsed; the result (or a mapping) must be an object. A blank
// string is refused with upstream's exact text (upstream contract 4 in docs/reference/upstream-contracts.md:
// "Sub-agent input schema must not be blank."; the output schema's message follows the same pattern,
// as in explicitSchema).
function parseSchema(value: unknown, key: 'input' | 'output'): { schema: unknown } | string {
  if (typeof value !== 'string') return { schema: value };
  if (value.trim() === '') return `Sub-agent ${key} schema must not be blank.`;
  let schema: unknown;
  try {
    schema = JSON.parse(value);
  } catch (e) {
    return `invalid JSON: ${e instanceof Error ? e.message : String(e)}`;
  }
  return isRecord(schema) ? { schema } : 'the JSON must be an object (a JSON Schema)';
}

// Checked at load, not at first use: a schema the validator cannot compile (a pattern RE2 cannot
// run, `type: objekt`) would otherwise fail every invocation of the agent at run time.
function schemaCompileProblem(schema: unknown): string | undefined {
  if (!isRecord(schema)) return undefined;
  try {
    compileSchema(schema as JsonSchema);
    return undefined;
  } catch (e) {
    return `not a valid JSON Schema: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function reportRepeats(
  names: unknown[],
  key: string,
  report: (message: string, ...path: (string | number)[]) => void,
) {
  const seen = new Set<unknown>();
  names.forEach((name, i) => {
    if (seen.has(name)) report(`${JSON.stringify(name)} is listed twice`, key, i);
    seen.add(name);
  });
}
