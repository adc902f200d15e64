import { CallDetail, InvocationView, MeshEvent } from '@agentmesh/shared';
import swagger from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OPENAI_SCHEMAS } from '../openai/openai-schema.js';
import { AgentDescriptionSchema } from '../routes/agent-description.js';
import { documentRoute } from './document-route.js';
import { MESH_NAME, meshLogo } from './mesh-logo.js';

// Browser code of the Swagger UI (serialized into its initializer, hence built from text): with
// auth on it asks once per tab for an API key and sends it with the document fetch and every
// "Try it out" request; a 401 forgets it, so the next load asks again.
type UiConfig = NonNullable<FastifySwaggerUiOptions['uiConfig']>;
const STORE = `'agentmesh-api-key'`;
const requestInterceptor = new Function(
  'request',
  `var key = sessionStorage.getItem(${STORE});
  if (!key) { key = window.prompt('API key of this mesh (sent as Authorization: Bearer <key>)') || '';
    if (key) sessionStorage.setItem(${STORE}, key); }
  if (key && !request.headers.Authorization) request.headers.Authorization = 'Bearer ' + key;
  return request;`,
) as UiConfig['requestInterceptor'];
const responseInterceptor = new Function(
  'response',
  `if (response.status === 401) sessionStorage.removeItem(${STORE});
  return response;`,
) as UiConfig['responseInterceptor'];

const INVOKE_PATH = /^\/agents\/([^/]+)\/invoke$/;
// A Host header fit to be a URL's authority (a name or address and a port); else no server is guessed.
const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?$/;

/** Options of the document. */
export interface DocsOptions {
  /** MESH_API_KEYS is set: operations other than the open ones declare the bearer scheme. */
  auth: boolean;
  /** The base URL clients reach the gateway at (behind a proxy); else the request's own host. */
  publicUrl?: string | undefined;
}

/**
 * The OpenAPI 3.1 document (`/docs/json`, `/docs/yaml`) and the Swagger UI (`/docs`), generated
 * from the routes' schemas: named components (ErrorBody, InvocationView, AgentDescription,
 * MeshEvent), security per operation, `servers` from the request or `publicUrl`; a scoped key is
 * shown only the invoke operations of its agents. Register before the routes.
 */
export async function registerDocs(app: FastifyInstance, opts: DocsOptions): Promise<void> {
  app.addSchema({ $id: 'InvocationView', ...InvocationView });
  app.addSchema({ $id: 'MeshEvent', ...MeshEvent });
  app.addSchema({ $id: 'CallDetail', ...CallDetail });
  app.addSchema(AgentDescriptionSchema);
  for (const schema of OPENAI_SCHEMAS) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: MESH_NAME,
        version: '0.1.0',
        description:
          'Every agent of this mesh, each with its own invoke operation and its real input and output ' +
          'schema. Errors are `{"error": {code, message, details?}}` with a stable code.',
      },
      tags: [
        { name: 'agents', description: 'The agents, and one invoke operation per agent.' },
        { name: 'invocations', description: 'Invocations: read, list, cancel, follow their events.' },
        {
          name: 'openai-compatible',
          description:
            'The agents as OpenAI chat models (`/v1`): any OpenAI SDK or chat UI talks to them. Errors are OpenAI\'s `{"error": {message, type, code}}`.',
        },
        { name: 'health', description: 'Liveness, readiness and metrics (open with auth on).' },
        { name: 'docs', description: 'This document and its Swagger UI.' },
      ],
      components: opts.auth
        ? {
            securitySchemes: {
              bearerAuth: {
                type: 'http',
                scheme: 'bearer',
                description: 'One of the keys of MESH_API_KEYS.',
              },
            },
          }
        : {},
      ...(opts.auth ? { security: [{ bearerAuth: [] }] } : {}),
    },
    // Shared schemas are components under their own `$id` (ErrorBody, not def-0).
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => documentRoute({ schema, url, route }, opts.auth),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    logo: meshLogo(),
    theme: { title: `${MESH_NAME} API` },
    ...(opts.auth ? { uiConfig: { requestInterceptor, responseInterceptor } } : {}),
    transformSpecification: (spec, req) => {
      const paths = { ...(spec.paths as Record<string, unknown>) };
      if (opts.auth) {
        for (const path of Object.keys(paths)) {
          const agent = INVOKE_PATH.exec(path)?.[1];
          if (agent && !req.meshCaller.mayUse(agent)) delete paths[path];
        }
      }
      return { ...spec, servers: serversFor(req, opts.publicUrl), paths };
    },
  });
}

/** Where the caller reaches this gateway: `publicUrl`, else the scheme and Host of its request. */
function serversFor(
  req: FastifyRequest,
  publicUrl: string | undefined,
): { url: string; description: string }[] {
  if (publicUrl) {
    const url = publicUrl.endsWith('/') ? publicUrl.slice(0, -1) : publicUrl;
    return [{ url, description: 'This mesh (configured).' }];
  }
  const host = req.headers.host;
  if (typeof host !== 'string' || !HOST.test(host)) return [{ url: '/', description: 'This mesh.' }];
  return [{ url: `${req.protocol}://${host}`, description: 'This mesh, as this request reached it.' }];
}
