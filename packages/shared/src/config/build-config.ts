import { checkReferences } from './check-references.js';
import { ConfigError } from './config-error.js';
import { deepFreeze } from './deep-freeze.js';
import { expandEnv } from './expand-env.js';
import { normalizeConfig } from './normalize-config.js';
import { restoreCoercedStrings, schemaProblems } from './schema-problems.js';
import type { ConfigEnv, ConfigProblem, MeshConfig } from './types.js';

/**
 * Validates a parsed config tree (from YAML, JSON or a mesh.config.ts default export) and returns
 * it resolved and deeply frozen; throws one `ConfigError` listing every problem (env, schema,
 * references) otherwise. Tool names are checked later, against the catalogue.
 */
export function buildConfig(tree: unknown, file: string, env: ConfigEnv): MeshConfig {
  const expanded = expandEnv(tree, env, file);
  restoreCoercedStrings(expanded.value, expanded.coerced);
  // Defaults are applied by normalizeConfig, not `Value.Default`: that clones union members, and a
  // TypeBox `input` in a mesh.config.ts must stay the very object the module exported.
  const value = expanded.value;
  const { config, problems } = normalizeConfig(value, file);
  // A scalar whose expansion failed is left as written; what later checks say about it is noise.
  const envPaths = new Set(expanded.problems.map((p) => p.path));
  const later = [...schemaProblems(value, file), ...problems, ...checkReferences(config, file)];
  const all = unique([...expanded.problems, ...later.filter((p) => !envPaths.has(p.path))]);
  if (all.length > 0) throw new ConfigError(all);
  return deepFreeze(config);
}

function unique(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.file}\0${p.path}\0${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
