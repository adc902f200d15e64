import type { KeyLayout } from '@agentmesh/shared';
import type { MeshScripts } from '@agentmesh/shared/redis';
import type { FastifyPluginAsync } from 'fastify';
import { readCallDetail } from '../calls/read-call-detail.js';
import type { MeshState } from '../mesh-state.js';
import { errorResponse, namedResponse, UNAVAILABLE } from './responses.js';

/** Options of the call routes. */
export interface CallRoutesOptions {
  scripts: MeshScripts;
  keys: KeyLayout;
  mesh: MeshState;
}

const Params = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'An invocation id (any node of a tree).' },
    callId: { type: 'string', description: 'The `callId` of one of its `calls`.' },
  },
  required: ['id', 'callId'],
};

/** `GET /invocations/{id}/calls/{callId}` (docs/guides/console.md): what one call did, for the invocation's owner. */
export const callRoutes: FastifyPluginAsync<CallRoutesOptions> = async (app, opts) => {
  app.get<{ Params: { id: string; callId: string } }>(
    '/invocations/:id/calls/:callId',
    {
      schema: {
        tags: ['invocations'],
        operationId: 'getCall',
        summary: 'Read one call of an invocation, with what it was asked and what it gave',
        description:
          "From the durable records: a model call's messages and reply (text and tool calls) with " +
          "tokens, a tool call's arguments and result or error, a delegation's input and output. " +
          'A string longer than 256 KiB is cut there, and the answer says `truncated: true`.',
        params: Params,
        response: {
          200: namedResponse('CallDetail', 'The call.'),
          404: errorResponse(
            '`invocation_not_found`: no invocation has this id (or another API key started it); ' +
              '`call_not_found`: the invocation has no call with this id.',
          ),
          503: UNAVAILABLE,
        },
      },
    },
    async (req) =>
      readCallDetail(
        opts.scripts,
        opts.keys,
        opts.mesh.plan,
        req.params.id,
        req.params.callId,
        req.meshCaller,
      ),
  );
};
