import { LineCounter, parseDocument } from 'yaml';
import { buildConfig } from './build-config.js';
import { ConfigError } from './config-error.js';
import type { ConfigEnv, ConfigFormat, MeshConfig } from './types.js';

/**
 * Parses and validates a config text (`mesh.yaml` or a JSON file); pure: no file access, and the
 * environment is passed in. Throws a `ConfigError` with every problem, syntax errors included.
 */
export function parseConfig(text: string, file: string, env: ConfigEnv, format: ConfigFormat): MeshConfig {
  const tree = format === 'json' ? readJson(text, file) : readYaml(text, file);
  return buildConfig(tree, file, env);
}

function readYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    // After the first syntax error the parser's view is lost and later errors are mostly echoes of
    // it; a repeated key is the exception: it stands on its own.
    const errors = doc.errors.filter((e, i) => i === 0 || e.code === 'DUPLICATE_KEY');
    throw new ConfigError(
      errors.map((e) => ({
        file,
        path: at(lineCounter.linePos(e.pos[0])),
        message: `invalid YAML: ${e.message}`,
      })),
    );
  }
  try {
    return doc.toJS();
  } catch (e) {
    // e.g. an alias bomb past yaml's maxAliasCount
    throw new ConfigError([{ file, path: '(root)', message: `invalid YAML: ${messageOf(e)}` }]);
  }
}

function readJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const position = /at position (\d+)/.exec(messageOf(e));
    const path = position ? at(linePosition(text, Number(position[1]))) : '(root)';
    throw new ConfigError([{ file, path, message: `invalid JSON: ${messageOf(e)}` }]);
  }
}

function linePosition(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
}

function at(pos: { line: number; col: number }): string {
  return `line ${pos.line}, column ${pos.col}`;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
