// The package root is the pure core (issue 30): no Redis client is reachable from it, however deep,
// type-only imports included. What talks to Redis is the Redis-side entry (@agentmesh/shared/redis).
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** Packages that open or drive Redis connections. */
const REDIS_CLIENTS = ['ioredis', 'bullmq'];
// Static, side-effect and dynamic imports, type-only ones included; a specifier holds no whitespace.
const IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]([^'"\s]+)['"]/gm;

/** Every package `entry` reaches through the source files it imports, with the path that reaches it. */
function reachedPackages(entry: string): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const seen = new Set<string>();
  const visit = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const here = [...path, relative(SRC, file)];
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (spec!.startsWith('.')) visit(resolve(dirname(file), spec!.replace(/\.js$/, '.ts')), here);
      else if (!reached.has(spec!)) reached.set(spec!, here);
    }
  };
  visit(join(SRC, entry), []);
  return reached;
}

const redisClientsOf = (entry: string) =>
  [...reachedPackages(entry)]
    .filter(([name]) => REDIS_CLIENTS.some((c) => name === c || name.startsWith(`${c}/`)))
    .map(([name, path]) => `${path.join(' -> ')} imports ${name}`);

t.test('the Redis side reaches a Redis client, so the reading finds one where it is', async (t) => {
  t.match(redisClientsOf('redis-side.ts'), [/imports ioredis$/]);
});

t.test('the package root reaches no Redis client', async (t) => {
  const reached = reachedPackages('index.ts');
  t.ok(reached.has('@sinclair/typebox'), 'the imports of the root were read');
  t.strictSame(redisClientsOf('index.ts'), []);
});
