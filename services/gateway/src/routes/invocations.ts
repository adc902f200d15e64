import { type InvocationStatus, type KeyLayout, MeshError, NAME_PATTERN } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { FastifyPluginAsync } from 'fastify';
import type { InvocationService } from '../invocations/invocation-service.js';
import { InvocationPageSchema } from '../invocations/invocation-summary.js';
import { listInvocations } from '../invocations/list-invocations.js';
import { errorResponse, namedResponse, UNAVAILABLE } from './responses.js';

/** Options of the invocation routes. */
export interface InvocationRoutesOptions {
  invocations: InvocationService;
  redis: MeshRedis;
  keys: KeyLayout;
}

const NOT_FOUND = errorResponse(
  '`invocation_not_found`: no invocation has this id (or another API key started it).',
);
const IdParams = {
  type: 'object',
  properties: { id: { type: 'string', description: 'An invocation id: `inv_` and 32 hex digits.' } },
  required: ['id'],
};
const ListQuery = {
  type: 'object',
  properties: {
    agent: { type: 'string', pattern: NAME_PATTERN, description: 'Only invocations of this agent.' },
    status: {
      type: 'string',
      enum: ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'],
      description: 'Only invocations in this status.',
    },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' },
    cursor: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,400}$',
      description: 'The `nextCursor` of the previous page.',
    },
  },
  additionalProperties: false,
};

/** `GET /invocations`, `GET /invocations/{id}`, `DELETE /invocations/{id}`: only the caller's own. */
export const invocationRoutes: FastifyPluginAsync<InvocationRoutesOptions> = async (app, opts) => {
  const { invocations } = opts;
  const notFound = (id: string) => new MeshError('invocation_not_found', `No invocation has id ${id}.`);

  app.get<{ Querystring: { agent?: string; status?: InvocationStatus; limit?: number; cursor?: string } }>(
    '/invocations',
    {
      schema: {
        tags: ['invocations'],
        operationId: 'listInvocations',
        summary: 'List recent root invocations, newest first',
        description:
          'Summaries without input, output and calls. A page may hold fewer than `limit` items (a ' +
          'narrow filter scans at most 1000 entries per request): follow `nextCursor` until it is absent.',
        querystring: ListQuery,
        response: {
          200: { 'x-response-description': 'A page of summaries.', ...InvocationPageSchema },
          400: errorResponse('`invalid_input`: a query parameter is malformed (`details[].path` names it).'),
          503: UNAVAILABLE,
        },
      },
    },
    async (req) => {
      const { agent, status, cursor } = req.query;
      const limit = req.query.limit ?? 20;
      return listInvocations(opts.redis, opts.keys, { agent, status, limit, cursor }, req.meshCaller);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/invocations/:id',
    {
      schema: {
        tags: ['invocations'],
        operationId: 'getInvocation',
        summary: 'Read an invocation, with its calls',
        params: IdParams,
        response: {
          200: namedResponse('InvocationView', 'The invocation.'),
          404: NOT_FOUND,
          503: UNAVAILABLE,
        },
      },
    },
    async (req) => {
      const view = await invocations.viewFor(req.params.id, req.meshCaller);
      if (!view) throw notFound(req.params.id);
      // A session's invocation waiting its turn: an advance a dead runner left undone is done now.
      if (view.status === 'queued' && !view.parentId) await invocations.settleSessionOf(view.id);
      return view;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/invocations/:id',
    {
      schema: {
        tags: ['invocations'],
        operationId: 'cancelInvocation',
        summary: 'Cancel an invocation and its whole subtree',
        description:
          'Never its ancestors: for its parent, a cancelled delegation is a failed one (reason `cancelled`).',
        params: IdParams,
        response: {
          200: namedResponse('InvocationView', 'It had ended already: returned unchanged.'),
          202: namedResponse('InvocationView', 'Cancellation requested; it ends `cancelled` shortly.'),
          404: NOT_FOUND,
          503: UNAVAILABLE,
        },
      },
    },
    async (req, reply) => {
      const result = await invocations.cancel(req.params.id, req.meshCaller);
      if (!result) throw notFound(req.params.id);
      return reply.status(result.changed ? 202 : 200).send(result.view);
    },
  );
};
