import { isInvocationId, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { InvocationService } from '../invocations/invocation-service.js';

/** `GET /invocations/{id}`. */
export const invocationRoutes: FastifyPluginAsync<{ invocations: InvocationService }> = async (
  app,
  { invocations },
) => {
  app.get<{ Params: { id: string } }>(
    '/invocations/:id',
    { schema: { tags: ['invocations'], summary: 'Read an invocation, with its calls' } },
    async (req) => {
      const view = isInvocationId(req.params.id) ? await invocations.view(req.params.id) : undefined;
      if (!view) throw new MeshError('invocation_not_found', `No invocation has id ${req.params.id}.`);
      return view;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/invocations/:id',
    { schema: { tags: ['invocations'], summary: 'Cancel an invocation and its whole subtree' } },
    async (req, reply) => {
      const result = isInvocationId(req.params.id) ? await invocations.cancel(req.params.id) : undefined;
      if (!result) throw new MeshError('invocation_not_found', `No invocation has id ${req.params.id}.`);
      return reply.status(result.changed ? 202 : 200).send(result.view);
    },
  );
};
