import { extname, isAbsolute, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/**
 * Resolves a module named in the config (a `tools` entry, an agent's `module`) against the config's
 * directory. `./x`, `../x` and anything with a source extension (`tools/index.ts`) is a path; a bare
 * package name (`@acme/tools`, `acme-tools`) stays as written for Node to resolve.
 */
export function resolveModulePath(entry: string, dir: string): string {
  if (entry.startsWith('file:')) return fromFileUrl(entry);
  if (isAbsolute(entry)) return normalize(entry);
  if (entry.startsWith('@')) return entry;
  const relative = entry === '.' || entry === '..' || entry.startsWith('./') || entry.startsWith('../');
  if (relative || SOURCE_EXTENSIONS.has(extname(entry))) return resolve(dir, entry);
  return entry;
}

// A malformed file URL is left as written: importing it fails later with Node's own message.
function fromFileUrl(entry: string): string {
  try {
    return fileURLToPath(entry);
  } catch {
    return entry;
  }
}
