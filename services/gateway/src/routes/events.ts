import {
  isInvocationId,
  isTerminal,
  type KeyLayout,
  MeshError,
  type MeshEvent,
  rootOf,
} from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import type { InvocationService } from '../invocations/invocation-service.js';

/** Options of the events route. */
export interface EventRoutesOptions {
  redis: Redis;
  keys: KeyLayout;
  invocations: InvocationService;
  /** How often an idle stream sends a heartbeat comment. */
  heartbeatMs?: number;
}

/**
 * `GET /invocations/{id}/events`: Server-Sent Events of the invocation and everything it delegated
 * to, from the tree's event log in Redis, from the start or after `Last-Event-ID`; heartbeats while
 * idle; the stream ends after the requested invocation's terminal event.
 */
export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (app, opts) => {
  const open = new Set<() => void>();
  app.addHook('onClose', async () => {
    for (const end of open) end();
  });

  app.get<{ Params: { id: string } }>(
    '/invocations/:id/events',
    { schema: { tags: ['invocations'], summary: "Server-Sent Events of an invocation's whole tree" } },
    async (req, reply) => {
      const { id } = req.params;
      // Another API key's invocation is not found, as for GET /invocations/{id}.
      const view = isInvocationId(id) ? await opts.invocations.viewFor(id, req.meshCaller) : undefined;
      if (!view) throw new MeshError('invocation_not_found', `No invocation has id ${id}.`);
      const subtree = await opts.invocations.subtreeIds(id);
      const lastId = req.headers['last-event-id'];
      let cursor = typeof lastId === 'string' && /^\d+-\d+$/.test(lastId) ? lastId : '0-0';
      const reader = opts.redis.duplicate({
        enableOfflineQueue: true,
        lazyConnect: false,
        maxRetriesPerRequest: null,
      });
      reader.on('error', () => undefined); // the stream ends on the next failed read
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        open.delete(end);
        reader.disconnect();
        reply.raw.end();
      };
      open.add(end);
      reply.raw.on('close', end);
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      reply.raw.write(': connected\n\n');
      const stream = opts.keys.events(rootOf(id));
      const block = opts.heartbeatMs ?? 15_000;
      try {
        while (!ended) {
          const res = (await reader.xread('COUNT', 200, 'BLOCK', block, 'STREAMS', stream, cursor)) as
            | [string, [string, string[]][]][]
            | null;
          if (ended) break;
          if (!res) {
            if (
              isTerminal((await opts.invocations.view(id))?.status ?? 'failed') &&
              !(await reader.exists(stream))
            )
              break;
            reply.raw.write(': heartbeat\n\n');
            continue;
          }
          for (const [entryId, fields] of res[0]![1]) {
            cursor = entryId;
            const event = JSON.parse(fields[1] ?? '{}') as MeshEvent;
            if (event.type === 'delegation_started' && subtree.has(event.invocationId)) {
              subtree.add((event.data as { childId: string }).childId);
            }
            if (!subtree.has(event.invocationId)) continue;
            reply.raw.write(`id: ${entryId}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
            if (event.invocationId === id && isTerminalEvent(event)) return end();
          }
        }
      } catch (e) {
        if (!ended) req.log.warn({ err: (e as Error).message }, 'event stream failed');
      }
      end();
    },
  );
};

function isTerminalEvent(e: MeshEvent): boolean {
  if (e.type === 'output') return true;
  return e.type === 'status' && isTerminal(String((e.data as { status?: string })?.status ?? ''));
}
