import { type ErrorDetail, frameworkErrorCode, MeshError } from '@agentmesh/shared';
import type { FastifyError, FastifyInstance } from 'fastify';
import { AllowedMethods } from './allowed-methods.js';

/**
 * Every error answer is `{"error": {code, message, details?}}`, without stack or internals; a known
 * path asked with another method is 405 `method_not_allowed` with `Allow`. Install before any route.
 */
export function installErrorHandler(app: FastifyInstance, redisReachable: () => boolean = () => true): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof MeshError) return reply.status(err.status).send(err.toBody());
    if (err.validation) {
      const where = err.validationContext ?? 'body';
      const details: ErrorDetail[] = err.validation.map((v) => ({
        path: v.instancePath || missingPath(v.params) || '/',
        message: v.message ?? 'is invalid',
      }));
      const code = where === 'body' ? 'invalid_input' : 'invalid_input';
      const summary = details.map((d) => `${where}${d.path === '/' ? '' : d.path}: ${d.message}`).join('; ');
      return reply.status(400).send(new MeshError(code, `Invalid ${where}: ${summary}`, details).toBody());
    }
    // @fastify/static refuses a path outside its root with 403 (and a missing file with 404): for a
    // client either is a route that does not exist. Other client errors of plugins keep their class.
    if (err.statusCode === 403 || err.statusCode === 404) {
      const e = new MeshError('not_found', `Route ${req.method} ${req.url.split('?')[0]} not found.`);
      return reply.status(404).send(e.toBody());
    }
    const code = frameworkErrorCode(err);
    if (code) {
      const e = new MeshError(code);
      return reply.status(e.status).send(e.toBody());
    }
    // Redis holds every invocation: without it the gateway cannot serve, and a retry later may succeed.
    if (!redisReachable()) {
      return reply
        .status(503)
        .send(new MeshError('unavailable', 'Redis is unreachable; try again later.').toBody());
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send(new MeshError('internal').toBody());
  });
  // A known path asked with a method it does not answer is 405 with `Allow`, not 404.
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.method, route.url));
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const methods = allowed.on(path);
    // A route of this method that found nothing (@fastify/static's missing file) is a 404.
    if (methods.length > 0 && !methods.includes(req.method)) {
      const e = new MeshError(
        'method_not_allowed',
        `${req.method} is not allowed on ${path}; it answers ${methods.join(', ')}.`,
      );
      return reply.status(405).header('allow', methods.join(', ')).send(e.toBody());
    }
    const e = new MeshError('not_found', `Route ${req.method} ${path} not found.`);
    return reply.status(404).send(e.toBody());
  });
}

function missingPath(params: Record<string, unknown> | undefined): string | undefined {
  const p = params?.missingProperty;
  return typeof p === 'string' ? `/${p}` : undefined;
}
