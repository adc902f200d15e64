import { MeshError, SESSION_ID_PATTERN, SESSION_PAGE_MAX_MESSAGES, SessionMessage } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { GatewaySessions } from '../sessions/gateway-sessions.js';
import { errorResponse, UNAVAILABLE } from './responses.js';

/** Options of the session routes. */
export interface SessionRoutesOptions {
  sessions: GatewaySessions;
  invocations: InvocationService;
}

/** What `GET /sessions/{id}` answers (docs/guides/sessions.md). */
export const SessionViewSchema = {
  title: 'SessionView',
  type: 'object',
  properties: {
    id: { type: 'string' },
    agent: { type: 'string', description: 'The agent the session belongs to.' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: {
      type: 'string',
      format: 'date-time',
      description: 'Its last use; it expires a TTL after it.',
    },
    invocations: {
      type: 'array',
      items: { type: 'string' },
      description: 'Every invocation of the session whatever its status, oldest first.',
    },
    messages: {
      type: 'array',
      items: SessionMessage,
      description:
        'User message and final answer of each succeeded invocation, oldest first: one page of them ' +
        '(the first without `cursor`).',
    },
    nextCursor: {
      type: 'string',
      description: 'Present when more messages follow: pass it as `cursor` for the next page.',
    },
  },
  required: ['id', 'agent', 'createdAt', 'updatedAt', 'invocations', 'messages'],
  additionalProperties: false,
};

const PageQuery = {
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: SESSION_PAGE_MAX_MESSAGES,
      default: SESSION_PAGE_MAX_MESSAGES,
      description: 'Messages per page (a page also ends before 1 MiB of them).',
    },
    cursor: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,400}$',
      description: "The previous page's `nextCursor`; absent for the first page.",
    },
  },
  additionalProperties: false,
};

const NOT_FOUND = errorResponse(
  '`session_not_found`: no session has this id (or another API key created it).',
);
const IdParams = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'A session id, chosen by the client.' },
  },
  required: ['id'],
};

/** `GET /sessions/{id}` and `DELETE /sessions/{id}`: only the caller's own (docs/guides/sessions.md). */
export const sessionRoutes: FastifyPluginAsync<SessionRoutesOptions> = async (app, opts) => {
  const { sessions, invocations } = opts;
  const notFound = (id: string) => new MeshError('session_not_found', `No session has id ${id}.`);

  app.get<{ Params: { id: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/sessions/:id',
    {
      schema: {
        tags: ['sessions'],
        operationId: 'getSession',
        summary: 'Read a session: its invocations and its conversation so far, a page at a time',
        params: IdParams,
        querystring: PageQuery,
        response: {
          200: { 'x-response-description': 'The session.', ...SessionViewSchema },
          400: errorResponse(
            '`invalid_input`: the id, `limit` or `cursor` is malformed (`details[].path` names it).',
          ),
          404: NOT_FOUND,
          503: UNAVAILABLE,
        },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? SESSION_PAGE_MAX_MESSAGES;
      const view = await sessions.view(req.params.id, req.meshCaller, { limit, cursor: req.query.cursor });
      if (!view) throw notFound(req.params.id);
      return view;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/sessions/:id',
    {
      schema: {
        tags: ['sessions'],
        operationId: 'deleteSession',
        summary: 'Delete a session: its history and its binding go, the id is free again',
        description:
          'An invocation of the session that is running goes on to its end; those still waiting their turn are cancelled.',
        params: IdParams,
        response: {
          204: { description: 'Deleted.', type: 'null' },
          400: errorResponse('`invalid_input`: the id is malformed (`details[].path` names it).'),
          404: NOT_FOUND,
          503: UNAVAILABLE,
        },
      },
    },
    async (req, reply) => {
      const waiting = await sessions.remove(req.params.id, req.meshCaller);
      if (!waiting) throw notFound(req.params.id);
      for (const id of waiting) await invocations.cancel(id);
      return reply.status(204).send();
    },
  );
};
