import { formatPath, type PathSegment } from './config-path.js';
import type { ConfigProblem } from './types.js';

/** The problem of a value that is not an http(s) URL, at `path`; none for a non-string (the schema says it). */
export function urlProblems(value: unknown, file: string, path: PathSegment[]): ConfigProblem[] {
  if (typeof value !== 'string') return [];
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    return [{ file, path: formatPath(path), message: `not a URL: ${JSON.stringify(value)}` }];
  }
  if (protocol === 'http:' || protocol === 'https:') return [];
  return [{ file, path: formatPath(path), message: `not an http(s) URL: ${JSON.stringify(value)}` }];
}
