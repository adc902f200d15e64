import { isTypeBoxType } from '../plan/declared-schema.js';
import { formatPath, type PathSegment, toPointer } from './config-path.js';
import type { ConfigEnv, ConfigProblem } from './types.js';

/** A config tree after `${VAR}` expansion, with every problem found on the way. */
export interface ExpandedTree {
  value: unknown;
  problems: ConfigProblem[];
  /** JSON pointers of scalars that were one whole reference and became a number or boolean, with their text. */
  coerced: Map<string, string>;
}

const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;
const NUMBER = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** Expands `${VAR}` / `${VAR:-default}` in every string scalar of a parsed tree (`$${` is a literal `${`). */
export function expandEnv(tree: unknown, env: ConfigEnv, file: string): ExpandedTree {
  const problems: ConfigProblem[] = [];
  const coerced = new Map<string, string>();
  const ancestors = new Set<object>();
  const walk = (node: unknown, path: PathSegment[]): unknown => {
    if (typeof node === 'string') {
      const { text, errors, whole } = expandString(node, env);
      for (const message of errors) problems.push({ file, path: formatPath(path), message });
      if (errors.length > 0) return node;
      const scalar = whole ? readScalar(text) : undefined;
      if (scalar === undefined) return text;
      coerced.set(toPointer(path), text);
      return scalar;
    }
    if (!Array.isArray(node) && (!isPlainObject(node) || isTypeBoxType(node))) return node;
    // YAML aliases and modules can make cycles; walking one would never end.
    if (ancestors.has(node)) {
      problems.push({ file, path: formatPath(path), message: 'circular reference' });
      return null;
    }
    ancestors.add(node);
    const copy = Array.isArray(node)
      ? node.map((item, i) => walk(item, [...path, i]))
      : Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, [...path, key])]));
    ancestors.delete(node);
    return copy;
  };
  return { value: walk(tree, []), problems, coerced };
}

interface Expansion {
  text: string;
  errors: string[];
  /** The string was exactly one reference, nothing around it. */
  whole: boolean;
}

function expandString(s: string, env: ConfigEnv): Expansion {
  let text = '';
  const errors: string[] = [];
  let references = 0;
  let literal = false;
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('$${', i)) {
      text += '${';
      literal = true;
      i += 3;
    } else if (s.startsWith('${', i)) {
      const end = closingBrace(s, i + 2);
      if (end < 0) {
        errors.push(`bad environment reference "${s.slice(i)}"`);
        break;
      }
      const match = NAME.exec(s.slice(i + 2, end));
      if (!match) errors.push(`bad environment reference "${s.slice(i, end + 1)}"`);
      else {
        const [, name = '', fallback] = match;
        const value = env[name];
        // Shell semantics: `:-` also replaces a variable set to ''.
        if (value !== undefined && (value !== '' || fallback === undefined)) text += value;
        else if (fallback !== undefined) {
          const inner = expandString(fallback, env);
          text += inner.text;
          errors.push(...inner.errors);
        } else
          errors.push(`environment variable ${name} is not set (use \${${name}:-default} for a default)`);
      }
      references++;
      i = end + 1;
    } else {
      text += s[i];
      literal = true;
      i++;
    }
  }
  return { text, errors, whole: references === 1 && !literal };
}

// The `}` closing a reference opened just before `from`; defaults may nest references (`${A:-${B}}`).
function closingBrace(s: string, from: number): number {
  let depth = 1;
  for (let j = from; j < s.length; j++) {
    if (s.startsWith('${', j)) {
      depth++;
      j++;
    } else if (s[j] === '}' && --depth === 0) return j;
  }
  return -1;
}

// What a YAML 1.2 core-schema plain scalar reads as, when that is a number or a boolean.
function readScalar(text: string): number | boolean | undefined {
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (!NUMBER.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
