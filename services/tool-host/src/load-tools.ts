import {
  ConfigError,
  type ConfigProblem,
  checkToolName,
  compileSchema,
  declaredSchema,
  importModule,
  type JsonSchema,
  type MeshConfig,
  NAME_PATTERN,
  type ToolDefinition,
  type ToolInfo,
} from '@agentmesh/shared';

/** A tool ready to serve: its catalogue entry and its implementation. */
export interface LoadedTool {
  info: ToolInfo;
  run: ToolDefinition['run'];
}

const NAME = new RegExp(NAME_PATTERN);

/** Loads every tools module the config names; every problem (import, shape, name) at once. */
export async function loadTools(config: MeshConfig): Promise<LoadedTool[]> {
  const problems: ConfigProblem[] = [];
  const tools = new Map<string, LoadedTool>();
  for (const [i, entry] of config.tools.entries()) {
    const path = `tools[${i}]`;
    // MCP servers are mounted apart (mountMcpServers): they are connected, not imported.
    if (typeof entry !== 'string') continue;
    let mod: Record<string, unknown>;
    try {
      mod = await importModule(entry);
    } catch (e) {
      problems.push({ file: config.file, path, message: `cannot load ${entry}: ${(e as Error).message}` });
      continue;
    }
    for (const [exportName, value] of Object.entries(mod)) {
      for (const [j, def] of (Array.isArray(value) ? value : [value]).entries()) {
        if (!looksLikeTool(def)) continue;
        const where = `${path} (${entry}: export ${exportName}${Array.isArray(value) ? `[${j}]` : ''})`;
        addTool(tools, def, where, config.file, problems);
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return [...tools.values()];
}

/** Checks tool definitions given in code (tests, embedding) the same way modules are checked. */
export function loadToolDefinitions(defs: ToolDefinition[], file = '(code)'): LoadedTool[] {
  const problems: ConfigProblem[] = [];
  const tools = new Map<string, LoadedTool>();
  for (const [i, def] of defs.entries()) addTool(tools, def, `tools[${i}]`, file, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return [...tools.values()];
}

function addTool(
  tools: Map<string, LoadedTool>,
  def: ToolDefinition,
  where: string,
  file: string,
  problems: ConfigProblem[],
): void {
  const loaded = toLoadedTool(def, where, file, problems);
  if (!loaded) return;
  const twin = tools.get(loaded.info.name);
  // The same definition exported twice (default and named) is one tool; two definitions are a clash.
  if (twin && twin.run !== loaded.run) {
    problems.push({ file, path: where, message: `duplicate tool name "${loaded.info.name}"` });
  }
  tools.set(loaded.info.name, loaded);
}

function looksLikeTool(v: unknown): v is ToolDefinition {
  return typeof v === 'object' && v !== null && 'name' in v && 'run' in v;
}

function toLoadedTool(
  def: ToolDefinition,
  path: string,
  file: string,
  problems: ConfigProblem[],
): LoadedTool | undefined {
  const before = problems.length;
  const fail = (message: string) => problems.push({ file, path, message });
  if (typeof def.name !== 'string' || !NAME.test(def.name)) fail(`tool name must match ${NAME.source}`);
  if (typeof def.description !== 'string') fail('description must be a string');
  if (typeof def.run !== 'function') fail('run must be a function');
  if (def.needsApproval !== undefined && typeof def.needsApproval !== 'boolean')
    fail('needsApproval must be a boolean');
  if (def.timeoutMs !== undefined && (!Number.isInteger(def.timeoutMs) || def.timeoutMs <= 0)) {
    fail('timeoutMs must be a positive integer');
  }
  try {
    checkToolName(String(def.name));
  } catch (e) {
    fail((e as Error).message);
  }
  const input = schemaOf(def.input, 'input', fail);
  const output = def.output === undefined ? undefined : schemaOf(def.output, 'output', fail);
  if (problems.length > before || !input) return undefined;
  const info: ToolInfo = {
    name: def.name,
    description: def.description,
    input,
    idempotent: def.idempotent === true,
    source: 'native',
  };
  if (output) info.output = output;
  if (def.timeoutMs !== undefined) info.timeoutMs = def.timeoutMs;
  if (def.needsApproval === true) info.needsApproval = true;
  return { info, run: def.run };
}

function schemaOf(value: unknown, what: string, fail: (m: string) => void): JsonSchema | undefined {
  try {
    const schema = declaredSchema(value, 'output');
    // A tool's arguments are always a JSON object (OpenAI function parameters).
    if (what === 'input' && schema?.type !== 'object') {
      fail('input schema must describe a JSON object ("type": "object")');
      return undefined;
    }
    // Compiled now, so a schema the validator cannot run fails the start, not every call.
    if (schema) compileSchema(schema);
    return schema ?? undefined;
  } catch (e) {
    fail(`${what}: ${(e as Error).message}`);
    return undefined;
  }
}
