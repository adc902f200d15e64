import { type InvocationStatus, type KeyLayout, MeshError, NAME_PATTERN } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { InvocationService } from '../invocations/invocation-service.js';
import { InvocationPageSchema } from '../invocations/invocation-summary.js';
import { listInvocations } from '../invocations/list-invocations.js';

/** Options of the invocation routes. */
export interface InvocationRoutesOptions {
  invocations: InvocationService;
  redis: Redis;
  keys: KeyLayout;
}

const ErrorResponse = { $ref: 'ErrorBody#' };
const ListQuery = {
  type: 'object',
  properties: {
    agent: { type: 'string', pattern: NAME_PATTERN, description: 'Only invocations of this agent.' },
    status: {
      type: 'string',
      enum: ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'],
      description: 'Only invocations in this status.',
    },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Items per page, 1–100 (default 20).' },
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

  app.get<{ Querystring: { agent?: string; status?: InvocationStatus; limit?: string; cursor?: string } }>(
    '/invocations',
    {
      schema: {
        tags: ['invocations'],
        summary: 'List recent root invocations, newest first',
        description:
          'Summaries without input, output and calls. A page may hold fewer than `limit` items (a ' +
          'narrow filter scans at most 1000 entries per request): follow `nextCursor` until it is absent.',
        querystring: ListQuery,
        response: { 200: InvocationPageSchema, 400: ErrorResponse, 401: ErrorResponse },
      },
    },
    async (req) => {
      const { agent, status, cursor } = req.query;
      const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
      if (limit < 1 || limit > 100)
        throw new MeshError('invalid_input', 'Invalid querystring: limit must be between 1 and 100.', [
          { path: '/limit', message: 'must be between 1 and 100' },
        ]);
      return listInvocations(opts.redis, opts.keys, { agent, status, limit, cursor }, req.meshCaller);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/invocations/:id',
    { schema: { tags: ['invocations'], summary: 'Read an invocation, with its calls' } },
    async (req) => {
      const view = await invocations.viewFor(req.params.id, req.meshCaller);
      if (!view) throw notFound(req.params.id);
      return view;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/invocations/:id',
    { schema: { tags: ['invocations'], summary: 'Cancel an invocation and its whole subtree' } },
    async (req, reply) => {
      const result = await invocations.cancel(req.params.id, req.meshCaller);
      if (!result) throw notFound(req.params.id);
      return reply.status(result.changed ? 202 : 200).send(result.view);
    },
  );
};
