import { type ApiKey, MeshError } from '@agentmesh/shared';
import type { FastifyInstance } from 'fastify';
import { ApiKeyMatcher } from '../auth/api-key-matcher.js';
import { ANYONE, type Caller, NOBODY } from '../auth/caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent the request; set for every request before any route hook or handler runs. */
    meshCaller: Caller;
  }
}

// Routes anyone may call with auth on (by route pattern, so `/metrics?x` or `/docs/` match too).
// The Swagger UI page and its static assets hold no mesh data; `/docs/json` and `/docs/yaml` do.
// Nor does the console (`/ui` and its assets, docs/guides/console.md): its data comes from the API, with a key.
const OPEN_ROUTES = new Set([
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs',
  '/docs/',
  // A2A agent cards are public (docs/guides/a2a-and-remote-agents.md); they declare the bearer scheme themselves.
  '/a2a/:agent/.well-known/agent-card.json',
  '/a2a/{agent}/.well-known/agent-card.json',
]);
/** True for a route pattern anyone may call with auth on (the document gives it `security: []`). */
export const isOpen = (route: string | undefined): boolean =>
  route !== undefined &&
  (OPEN_ROUTES.has(route) ||
    route.startsWith('/docs/static/') ||
    route === '/ui' ||
    route.startsWith('/ui/'));

/** `Authorization: Bearer <token>` → the token; undefined for anything else. */
function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * Decorates every request with its `meshCaller`. With `apiKeys` (MESH_API_KEYS), every route but
 * the open ones (whose caller is the key's when a valid one came, else NOBODY) answers 401 `unauthorized` with `WWW-Authenticate: Bearer` unless the request
 * carries one of the keys; without them every request is `ANYONE`, as before auth existed.
 * Install it before any route is registered.
 */
export function installAuth(app: FastifyInstance, apiKeys: readonly ApiKey[] | undefined): void {
  app.decorateRequest('meshCaller', null as unknown as Caller);
  if (!apiKeys) {
    app.addHook('onRequest', async (req) => {
      req.meshCaller = ANYONE;
    });
    return;
  }
  const matcher = new ApiKeyMatcher(apiKeys);
  app.addHook('onRequest', async (req, reply) => {
    const token = bearerToken(req.headers.authorization);
    const caller = token === undefined ? undefined : matcher.match(token);
    if (isOpen(req.routeOptions.url)) {
      // Never refused; a valid key still says who asks (an unknown card's 404 lists its agents).
      req.meshCaller = caller ?? NOBODY;
      return;
    }
    if (caller) {
      req.meshCaller = caller;
      return;
    }
    // RFC 6750 §3: a challenge always; `invalid_token` when a token came and is not a key.
    const challenge =
      token === undefined ? 'Bearer realm="agentmesh"' : 'Bearer realm="agentmesh", error="invalid_token"';
    const message =
      token === undefined ? 'Send an API key as Authorization: Bearer <key>.' : 'The API key is not valid.';
    return reply
      .status(401)
      .header('www-authenticate', challenge)
      .send(new MeshError('unauthorized', message).toBody());
  });
}
