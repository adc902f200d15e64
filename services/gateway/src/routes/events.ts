import { isInvocationId, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import { type ServeTreeStream, serveTreeStream } from '../events/serve-tree-stream.js';
import type { StreamSlots } from '../events/stream-slots.js';
import { positionOf } from '../events/tree-position.js';
import type { TreeStream } from '../events/tree-stream.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { errorResponse, UNAVAILABLE } from './responses.js';

/** Options of the events route. */
export interface EventRoutesOptions {
  invocations: InvocationService;
  /** Opens the streams of invocation trees. */
  streams: TreeStreams;
  /** The bounds on open streams. */
  slots: StreamSlots;
  /** How responses are written: buffer bound, heartbeat, slow clients. */
  serve: Pick<ServeTreeStream, 'bufferBytes' | 'heartbeatMs' | 'slowClientMs'>;
  /** The end of every response still streaming (the gateway ends them when it closes). */
  open: Set<() => void>;
}

const EVENTS_SCHEMA = {
  tags: ['invocations'],
  operationId: 'streamInvocationEvents',
  summary: "Server-Sent Events of an invocation's whole tree",
  description:
    'The events of the invocation and of everything it delegated to, in order, from the start or ' +
    'after `Last-Event-ID`; a `: heartbeat` comment while idle. Every invocation of the tree ends ' +
    "with a terminal `status` event (after its `output` when it succeeded); the stream ends after the requested one's.",
  params: {
    type: 'object',
    properties: { id: { type: 'string', description: 'An invocation id: `inv_` and 32 hex digits.' } },
    required: ['id'],
  },
  querystring: {
    type: 'object',
    properties: {
      deltas: {
        type: 'boolean',
        description:
          "With `true`, the tree's `delta` events too (the text of model calls as it is written), " +
          'from now or after `Last-Event-ID`; each `id:` is then `<events>_<deltas>`. Default `false`.',
      },
    },
  },
  headers: {
    type: 'object',
    properties: {
      'Last-Event-ID': {
        type: 'string',
        description:
          'The `id:` of the last event received: the stream resumes right after it (with `deltas=true`, ' +
          'deltas too while they are kept).',
      },
    },
  },
  response: {
    200: {
      description:
        'A text/event-stream: per event `id:`, `event:` (its type) and `data:` (a MeshEvent as JSON).',
      content: { 'text/event-stream': { schema: { $ref: 'MeshEvent#' } } },
    },
    400: errorResponse('`invalid_input`: `deltas` is neither `true` nor `false`.'),
    404: errorResponse('`invocation_not_found`: no invocation has this id (or another API key started it).'),
    429: errorResponse(
      '`too_many_streams`: this API key, or the gateway, has as many streams open as allowed.',
    ),
    503: UNAVAILABLE,
  },
};

/**
 * `GET /invocations/{id}/events`: Server-Sent Events of the invocation and everything it delegated
 * to (events/tree-streams.ts), from the start or after `Last-Event-ID`, with `?deltas=true` the
 * tree's deltas too; heartbeats while idle; the stream ends after the requested invocation's
 * terminal event, and at once when `Last-Event-ID` lies at or past it.
 */
export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (app, opts) => {
  app.get<{ Params: { id: string }; Querystring: { deltas?: boolean } }>(
    '/invocations/:id/events',
    { schema: EVENTS_SCHEMA },
    async (req, reply) => {
      const { id } = req.params;
      // Another API key's invocation is not found, as for GET /invocations/{id}.
      const view = isInvocationId(id) ? await opts.invocations.viewFor(id, req.meshCaller) : undefined;
      if (!view) throw new MeshError('invocation_not_found', `No invocation has id ${id}.`);
      const deltas = req.query.deltas === true;
      const release = opts.slots.acquire(req.meshCaller.owner);
      let stream: TreeStream;
      try {
        stream = await opts.streams.open({ id, deltas, from: positionOf(req.headers['last-event-id']) });
      } catch (e) {
        release();
        throw e;
      }
      await serveTreeStream(
        reply,
        stream,
        {
          ...opts.serve,
          deltas,
          first: ': connected\n\n',
          release,
          warn: (message) => req.log.warn({ err: message }, 'event stream failed'),
        },
        opts.open,
      );
    },
  );
};
