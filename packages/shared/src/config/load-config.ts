import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { importModule } from '../import-module.js';
import { buildConfig } from './build-config.js';
import { ConfigError } from './config-error.js';
import { parseConfig } from './parse-config.js';
import type { ConfigEnv, ConfigFormat, MeshConfig } from './types.js';

const TEXT_FORMATS: Record<string, ConfigFormat> = { '.yaml': 'yaml', '.yml': 'yaml', '.json': 'json' };
const MODULES = new Set(['.ts', '.mts', '.js', '.mjs']);

/**
 * Loads the mesh config from a file: `.yaml`/`.yml`/`.json` text, or a `.ts`/`.mts`/`.js`/`.mjs`
 * module whose default export has the same shape. Problems name the file by its absolute path.
 */
export async function loadConfig(file: string, env: ConfigEnv): Promise<MeshConfig> {
  const absolute = resolve(file);
  const extension = extname(absolute).toLowerCase();
  const format = TEXT_FORMATS[extension];
  if (format === undefined && !MODULES.has(extension)) {
    const message = `unsupported file type ${JSON.stringify(extension)} (use .yaml, .yml, .json, .ts, .mts, .js or .mjs)`;
    throw problem(absolute, message);
  }
  let text = '';
  try {
    if (!(await stat(absolute)).isFile()) throw problem(absolute, 'cannot read the config: not a file');
    if (format !== undefined) text = await readFile(absolute, 'utf8');
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw problem(absolute, `cannot read the config: ${describeFsError(e)}`);
  }
  if (format !== undefined) return parseConfig(text, absolute, env, format);
  return buildConfig(await importDefault(absolute), absolute, env);
}

async function importDefault(file: string): Promise<unknown> {
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(file);
  } catch (e) {
    throw problem(file, `cannot import the config module: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (mod.default === undefined) {
    throw problem(file, 'the module has no default export (export default { models, tools, agents })');
  }
  return mod.default;
}

function describeFsError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  return e instanceof Error ? e.message : String(e);
}

function problem(file: string, message: string): ConfigError {
  return new ConfigError([{ file, path: '(root)', message }]);
}
