import { ForkRequest, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { ForkService } from '../forks/fork-service.js';
import { IdempotencyKeyHeader, idempotencyKeyOf } from '../invocations/idempotency-key.js';
import { InvocationService } from '../invocations/invocation-service.js';
import { errorResponse, FORBIDDEN, namedResponse, UNAVAILABLE } from './responses.js';
import { runQueryOf, runQueryProperties } from './run-query.js';

/** Options of the fork route. */
export interface ForkRoutesOptions {
  forks: ForkService;
  defaultTimeoutSeconds: number;
  /** The largest `?timeout` (MESH_MAX_TIMEOUT_SECONDS). */
  maxTimeoutSeconds: number;
}

const IdParams = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The invocation to fork: any node of a tree.' },
  },
  required: ['id'],
};

const KEY_TEXT =
  'Header `Idempotency-Key` (optional): the same key for the same invocation with the same API key answers ' +
  'the same fork and never starts a second one; with another body it answers 422 `idempotency_key_reused`. ' +
  "A fork's keys never match an invoke's.";

/** `POST /invocations/{id}/fork` (docs/guides/durability.md): re-run any node of a tree from one of its calls. */
export const forkRoutes: FastifyPluginAsync<ForkRoutesOptions> = async (app, opts) => {
  app.post<{
    Params: { id: string };
    Body: ForkRequest;
    Querystring: { wait?: number; timeout?: number; budget?: number };
  }>(
    '/invocations/:id/fork',
    {
      schema: {
        tags: ['invocations'],
        operationId: 'forkInvocation',
        summary: 'Re-run an invocation from one of its calls, reusing every call before it',
        description:
          "Starts a new root invocation of the node's agent (with its input, or `input`) whose calls before " +
          '`fromCallId` are reused from the node, model replies, tool results and delegation results alike ' +
          '(marked `reused`), and which runs live from `fromCallId` on; with `result`, that call is not run ' +
          'and the value is its result. The node is never changed. Answers like invoke.\n\n' +
          KEY_TEXT,
        params: IdParams,
        querystring: {
          type: 'object',
          properties: runQueryProperties(opts.defaultTimeoutSeconds, opts.maxTimeoutSeconds),
          additionalProperties: false,
        },
        headers: {
          type: 'object',
          properties: { 'Idempotency-Key': { ...IdempotencyKeyHeader, description: KEY_TEXT } },
        },
        body: ForkRequest,
        response: {
          200: namedResponse('InvocationView', 'The fork ended within `wait`.'),
          202: {
            ...namedResponse(
              'InvocationView',
              'Still running after `wait`: follow `Location` (GET /invocations/{id}).',
            ),
            headers: { Location: { type: 'string', description: '/invocations/{id}' } },
          },
          400: errorResponse(
            "`invalid_input` (the body, `input` against the agent's schema with `details[].path` inside the input, a `result` for a model call, the query or Idempotency-Key) or `invalid_json`.",
          ),
          403: FORBIDDEN,
          404: errorResponse(
            '`invocation_not_found` (no invocation has this id, or another API key started it) or `call_not_found` (it has no call `fromCallId`).',
          ),
          409: errorResponse(
            "`call_not_recorded` (`fromCallId` without a `result`, or a call before it, has no final recorded outcome) or `plan_changed` (the agent's definition changed since the invocation ran; the message names what).",
          ),
          413: errorResponse('`payload_too_large`: the body is over the limit (1 MiB by default).'),
          415: errorResponse('`unsupported_media_type`: only application/json bodies are accepted.'),
          422: errorResponse(
            '`idempotency_key_reused` (the Idempotency-Key came before with another body) or `fork_too_large` (the invocation has more call records than MESH_MAX_FORK_RECORDS or MESH_MAX_FORK_BYTES allow).',
          ),
          503: UNAVAILABLE,
        },
      },
      preValidation: async (req) => {
        if (req.body === undefined)
          throw new MeshError(
            'invalid_json',
            'The request body is empty: send {"fromCallId": "<callId>"} as JSON.',
          );
      },
    },
    async (req, reply) => {
      const run = runQueryOf(req.query, opts.defaultTimeoutSeconds);
      const idempotencyKey = idempotencyKeyOf(req.headers);
      const abort = new AbortController();
      // The response closing before it was sent means the client went away: its wait ends.
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      const traceparent = req.headers.traceparent;
      const view = await opts.forks.fork(req.params.id, req.body, {
        ...run,
        untilDecision: true, // as invoke's wait (docs/reference/rest-api.md, docs/guides/durability.md)
        traceparent: typeof traceparent === 'string' ? traceparent : undefined,
        signal: abort.signal,
        owner: req.meshCaller.owner,
        idempotencyKey,
        caller: req.meshCaller,
      });
      if (InvocationService.finished(view)) return reply.status(200).send(view);
      return reply.status(202).header('location', `/invocations/${view.id}`).send(view);
    },
  );
};
