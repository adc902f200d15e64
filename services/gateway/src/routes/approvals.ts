import { ApprovalDecisionBody, ApprovalPage, type InvocationView, type KeyLayout } from '@agentmesh/shared';
import type { MeshRedis, MeshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { FastifyPluginAsync } from 'fastify';
import { decideApproval } from '../approvals/decide-approval.js';
import { listApprovals } from '../approvals/list-approvals.js';
import { errorResponse, namedResponse, UNAVAILABLE } from './responses.js';

/** Options of the approval routes. */
export interface ApprovalRoutesOptions {
  redis: MeshRedis;
  scripts: MeshScripts;
  keys: KeyLayout;
  queues: ReadonlyMap<string, Queue>;
  view(id: string): Promise<InvocationView | undefined>;
}

const DecideParams = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The invocation that asks (any node of a tree).' },
    callId: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.:-]{1,128}$',
      description: 'The `callId` of one of its `pendingApprovals`.',
    },
  },
  required: ['id', 'callId'],
};

const ListQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' },
    cursor: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,600}$',
      description: 'The `nextCursor` of the previous page.',
    },
  },
  additionalProperties: false,
};

/** `POST /invocations/{id}/approvals/{callId}` and `GET /approvals` (docs/guides/approvals-and-budgets.md): the owner's only. */
export const approvalRoutes: FastifyPluginAsync<ApprovalRoutesOptions> = async (app, opts) => {
  app.post<{ Params: { id: string; callId: string }; Body: ApprovalDecisionBody }>(
    '/invocations/:id/approvals/:callId',
    {
      schema: {
        tags: ['approvals'],
        operationId: 'decideApproval',
        summary: 'Approve or reject a call waiting for approval',
        description:
          'Approved, the call runs as usual (same call id, same Idempotency-Key); rejected, the model ' +
          'reads `Tool <name> was not approved: <reason>`. Repeating the same decision is 200 at any time.',
        params: DecideParams,
        body: ApprovalDecisionBody,
        response: {
          200: namedResponse('InvocationView', 'Decided (now or before, the same way): the invocation.'),
          400: errorResponse('`invalid_input` or `invalid_json`: the body is malformed (`details[].path`).'),
          404: errorResponse(
            '`approval_not_found`: no such invocation, or it has no approval with this call id (or another API key started it).',
          ),
          409: errorResponse(
            '`approval_conflict`: it was decided otherwise already, or the invocation ended undecided.',
          ),
          503: UNAVAILABLE,
        },
      },
    },
    async (req) => decideApproval(opts, req.params.id, req.params.callId, req.body, req.meshCaller),
  );

  app.get<{ Querystring: { limit?: number; cursor?: string } }>(
    '/approvals',
    {
      schema: {
        tags: ['approvals'],
        operationId: 'listApprovals',
        summary: "List the caller's pending approvals across all invocations, newest first",
        description:
          'A decided approval leaves the list at once. A page may hold fewer than `limit` items: ' +
          'follow `nextCursor` until it is absent.',
        querystring: ListQuery,
        response: {
          200: { 'x-response-description': 'A page of pending approvals.', ...ApprovalPage },
          400: errorResponse('`invalid_input`: a query parameter is malformed (`details[].path` names it).'),
          503: UNAVAILABLE,
        },
      },
    },
    async (req) =>
      listApprovals(
        opts.redis,
        opts.keys,
        { limit: req.query.limit ?? 20, cursor: req.query.cursor },
        req.meshCaller,
      ),
  );
};
