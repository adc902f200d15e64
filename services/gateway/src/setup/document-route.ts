import type { JsonSchema } from '@agentmesh/shared';
import type { RouteOptions } from 'fastify';
import { openAiErrorResponse } from '../openai/openai-schema.js';
import { errorResponse } from '../routes/responses.js';
import { isOpen } from './auth.js';

type RouteSchema = JsonSchema & { hide?: boolean; response?: Record<string, unknown> };

const text = (type: string, description: string) => ({
  description,
  content: { [type]: { schema: { type: 'string' } } },
});

// The Swagger UI plugin hides its routes; the page and the document are operations too.
const DOCS_ROUTES: Record<string, RouteSchema> = {
  '/docs/': {
    tags: ['docs'],
    operationId: 'getDocs',
    summary: 'The Swagger UI of this mesh',
    response: { 200: text('text/html', 'The Swagger UI page.') },
  },
  '/docs/json': {
    tags: ['docs'],
    operationId: 'getOpenApiJson',
    summary: 'This OpenAPI document, as JSON',
    response: { 200: { 'x-response-description': 'The OpenAPI 3.1 document.', type: 'object' } },
  },
  '/docs/yaml': {
    tags: ['docs'],
    operationId: 'getOpenApiYaml',
    summary: 'This OpenAPI document, as YAML',
    response: { 200: text('application/x-yaml', 'The OpenAPI 3.1 document.') },
  },
};

// What any request can be answered before a route sees it (framework-errors.ts).
const TRANSPORT = {
  408: errorResponse('`request_timeout`: the headers or the body did not arrive in time.'),
  414: errorResponse('`url_too_long`: the URL is longer than the gateway reads.'),
  431: errorResponse('`headers_too_large`: the headers are larger than the gateway reads.'),
};
const UNAUTHORIZED_TEXT =
  '`unauthorized`: no API key, or not one of MESH_API_KEYS (with `WWW-Authenticate: Bearer`).';
const UNAUTHORIZED = errorResponse(UNAUTHORIZED_TEXT);
// The OpenAI-compatible routes answer in OpenAI's shape (openai/openai-error.ts), 401 too.
const UNAUTHORIZED_OPENAI = openAiErrorResponse(UNAUTHORIZED_TEXT);

/**
 * How a route appears in the OpenAPI document (@fastify/swagger's `transform`): the docs routes
 * shown, and per operation its security (the bearer scheme with auth on, none for open routes or
 * with auth off), 401 where a key is demanded, 403 only with auth on, and the transport errors.
 */
export function documentRoute(
  { schema, url, route }: { schema: unknown; url: string; route: RouteOptions },
  auth: boolean,
): { schema: RouteSchema; url: string } {
  const own = route.method === 'GET' ? DOCS_ROUTES[url] : undefined;
  const s = (own ?? schema ?? {}) as RouteSchema;
  if (s.hide) return { schema: s, url };
  // The UI's route is `/docs/` (prefix plus `/`); fastify serves it at `/docs` too, as docs/reference/rest-api.md says.
  if (url === '/docs/') url = '/docs';
  const secured = auth && !isOpen(url);
  const { 403: forbidden, ...responses } = s.response ?? {};
  return {
    url,
    schema: {
      ...s,
      security: secured ? [{ bearerAuth: [] }] : [],
      response: {
        ...responses,
        ...(secured ? { 401: url.startsWith('/v1/') ? UNAUTHORIZED_OPENAI : UNAUTHORIZED } : {}),
        ...(auth && forbidden ? { 403: forbidden } : {}),
        ...TRANSPORT,
      },
    },
  };
}
