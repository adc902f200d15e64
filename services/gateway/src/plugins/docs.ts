import { InvocationView } from '@agentmesh/shared';
import swagger from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

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

/**
 * The OpenAPI document (`/docs/json`, `/docs/yaml`) and the Swagger UI (`/docs`). With auth on,
 * the document declares the bearer scheme as every operation's requirement (open routes opt out
 * with `security: []`) and shows a scoped key only the invoke operations of its agents.
 */
export async function registerDocs(app: FastifyInstance, opts: { auth: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'agentmesh',
        version: '0.1.0',
        description:
          'Every agent of this mesh, each with its own invoke operation and its real input and output schema.',
      },
      components: {
        schemas: { InvocationView: InvocationView as never },
        ...(opts.auth
          ? {
              securitySchemes: {
                bearerAuth: {
                  type: 'http',
                  scheme: 'bearer',
                  description: 'One of the keys of MESH_API_KEYS.',
                },
              },
            }
          : {}),
      },
      ...(opts.auth ? { security: [{ bearerAuth: [] }] } : {}),
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    ...(opts.auth
      ? {
          uiConfig: { requestInterceptor, responseInterceptor },
          transformSpecification: (spec, req) => {
            const paths = { ...(spec.paths as Record<string, unknown>) };
            for (const path of Object.keys(paths)) {
              const agent = INVOKE_PATH.exec(path)?.[1];
              if (agent && !req.meshCaller.mayUse(agent)) delete paths[path];
            }
            return { ...spec, paths };
          },
        }
      : {}),
  });
}
