import { MeshError } from '../errors/mesh-error.js';
import type { ConfigProblem } from './types.js';

/** A mesh config that cannot be used (code `invalid_config`), carrying every problem found in it. */
export class ConfigError extends MeshError {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(
      'invalid_config',
      formatConfigProblems(problems),
      problems.map((p) => ({ path: p.path, message: p.message })),
    );
    this.name = 'ConfigError';
    this.problems = Object.freeze([...problems]);
  }
}

/** A heading `Invalid mesh config (N problems):`, then one `<file>: <path>: <message>` line per problem. */
export function formatConfigProblems(problems: readonly ConfigProblem[]): string {
  const heading = `Invalid mesh config (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}):`;
  return [heading, ...problems.map((p) => `${p.file}: ${p.path}: ${p.message}`)].join('\n');
}
