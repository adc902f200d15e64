import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MeshError } from '@agentmesh/shared';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

// The page loads only what this gateway serves (docs/guides/console.md: no request leaves the origin); the
// browser enforces it. Inline styles: the waterfall places its bars with style attributes.
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the console's build lands: `dist/` of the @agentmesh/console workspace. */
export function consoleDir(): string {
  const manifest = createRequire(import.meta.url).resolve('@agentmesh/console/package.json');
  return path.join(path.dirname(manifest), 'dist');
}

/**
 * Serves the console (docs/guides/console.md) at `/ui`: its index page at `/ui` and `/ui/`, its assets under
 * `/ui/` (hashed names, cached for good; the page itself revalidated), without a key, like /docs,
 * and outside the OpenAPI document; `/ui/config.json` tells the page whether keys are required,
 * so that it asks for one before any request (a 401 would log a console error), and whether this
 * gateway forks. A gateway whose
 * console was not built answers 503 there.
 */
export async function registerConsole(
  app: FastifyInstance,
  opts: { auth: boolean; dir?: string | undefined },
): Promise<void> {
  const dir = opts.dir ?? consoleDir();
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    const missing = async () => {
      throw new MeshError(
        'unavailable',
        'The console is not built: run `npm run build:console` (npm start and the image do it).',
      );
    };
    app.get('/ui', { schema: { hide: true } }, missing);
    app.get('/ui/*', { schema: { hide: true } }, missing);
    return;
  }
  // Its own scope: the Swagger UI registers @fastify/static too, with its own `sendFile`.
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: '/ui/',
      schemaHide: true,
      cacheControl: false,
      setHeaders: (reply, file) => {
        const hashed = file.startsWith(path.join(dir, 'assets') + path.sep);
        reply.headers({
          'content-security-policy': POLICY,
          'x-content-type-options': 'nosniff',
          'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
        });
      },
    });
    scope.get('/ui', { schema: { hide: true } }, (_req, reply: FastifyReply) => reply.sendFile('index.html'));
    // `fork`: this gateway re-runs from a call (docs/guides/durability.md), so the page offers it on every call.
    scope.get('/ui/config.json', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send({ auth: opts.auth, fork: app.hasRoute({ method: 'POST', url: '/invocations/:id/fork' }) }),
    );
  });
}
