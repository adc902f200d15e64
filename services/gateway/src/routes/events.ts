import { once } from 'node:events';
import {
  isInvocationId,
  isTerminal,
  type KeyLayout,
  MeshError,
  type MeshEvent,
  type MeshRedis,
  rootOf,
} from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { EventHub } from '../events/event-hub.js';
import { resolveEvent } from '../events/resolve-event.js';
import type { StreamSlots } from '../events/stream-slots.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { errorResponse, UNAVAILABLE } from './responses.js';

/** Options of the events route. */
export interface EventRoutesOptions {
  /** The shared command connection: streams read with non-blocking XRANGE on it. */
  redis: MeshRedis;
  keys: KeyLayout;
  invocations: InvocationService;
  /** Tells streams their log grew (one blocking connection per gateway). */
  hub: EventHub;
  /** The bounds on open streams. */
  slots: StreamSlots;
  /** How often an idle stream sends a heartbeat comment (and checks its invocation ended). */
  heartbeatMs?: number;
}

type Entry = [string, string[]];
const PAGE = 200;

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
  headers: {
    type: 'object',
    properties: {
      'Last-Event-ID': {
        type: 'string',
        description: 'The `id:` of the last event received: the stream resumes right after it.',
      },
    },
  },
  response: {
    200: {
      description:
        'A text/event-stream: per event `id:`, `event:` (its type) and `data:` (a MeshEvent as JSON).',
      content: { 'text/event-stream': { schema: { $ref: 'MeshEvent#' } } },
    },
    404: errorResponse('`invocation_not_found`: no invocation has this id (or another API key started it).'),
    429: errorResponse(
      '`too_many_streams`: this API key, or the gateway, has as many streams open as allowed.',
    ),
    503: UNAVAILABLE,
  },
};

/**
 * `GET /invocations/{id}/events`: Server-Sent Events of the invocation and everything it delegated
 * to, from the tree's event log in Redis, from the start or after `Last-Event-ID`; heartbeats while
 * idle; the stream ends after the requested invocation's terminal event, and at once when
 * `Last-Event-ID` lies at or past it.
 */
export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (app, opts) => {
  const { redis, keys, hub } = opts;
  const open = new Set<() => void>();
  app.addHook('onClose', async () => {
    for (const end of open) end();
  });

  app.get<{ Params: { id: string } }>(
    '/invocations/:id/events',
    { schema: EVENTS_SCHEMA },
    async (req, reply) => {
      const { id } = req.params;
      // Another API key's invocation is not found, as for GET /invocations/{id}.
      const view = isInvocationId(id) ? await opts.invocations.viewFor(id, req.meshCaller) : undefined;
      if (!view) throw new MeshError('invocation_not_found', `No invocation has id ${id}.`);
      const stream = keys.events(rootOf(id));
      let cursor = streamId(req.headers['last-event-id']) ?? '0-0';
      const pastEnd =
        isTerminal(view.status) && cursor !== '0-0' && !(await terminalAfter(redis, stream, id, cursor));
      const subtree = pastEnd ? new Set<string>() : await opts.invocations.subtreeIds(id);
      const release = opts.slots.acquire(req.meshCaller.owner);

      let ended = false;
      let heartbeat: NodeJS.Timeout | undefined;
      let unwatch: (() => void) | undefined;
      const end = () => {
        if (ended) return;
        ended = true;
        open.delete(end);
        clearInterval(heartbeat);
        unwatch?.();
        release();
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
      if (pastEnd) return end();

      // Reads every entry after the cursor; a notification during a read makes it read again.
      let running: Promise<void> | undefined;
      let dirty = false;
      let outputSeen = false;
      const pump = (): Promise<void> => {
        dirty = true;
        running ??= (async () => {
          try {
            while (dirty && !ended) {
              dirty = false;
              for (let more = true; more && !ended; ) {
                const page = (await redis.xrange(stream, `(${cursor}`, '+', 'COUNT', PAGE)) as Entry[];
                more = page.length === PAGE;
                for (const [entryId, fields] of page) {
                  if (ended) return;
                  cursor = entryId;
                  const event = parse(fields[1]);
                  if (!event) continue;
                  if (event.type === 'delegation_started' && subtree.has(event.invocationId)) {
                    subtree.add((event.data as { childId: string }).childId);
                  }
                  if (!subtree.has(event.invocationId)) continue;
                  const sent = await resolveEvent(redis, keys, event);
                  if (ended) return;
                  reply.raw.write(`id: ${entryId}\nevent: ${event.type}\ndata: ${JSON.stringify(sent)}\n\n`);
                  if (event.invocationId === id && isTerminalStatus(event)) return end();
                  if (event.invocationId === id && event.type === 'output') outputSeen = true;
                }
                // A slow reader holds the stream back instead of filling the gateway's memory.
                if (reply.raw.writableNeedDrain && !ended) await once(reply.raw, 'drain');
              }
              // FINISH appends an output and its terminal status in one step, so a read that saw
              // the output saw all there is: a log written before status events followed it ends here.
              if (outputSeen) return end();
            }
          } catch (e) {
            if (!ended) req.log.warn({ err: (e as Error).message }, 'event stream failed');
            end();
          } finally {
            running = undefined;
          }
        })();
        return running;
      };

      try {
        unwatch = await hub.watch(stream, () => void pump());
      } catch {
        return end();
      }
      if (ended) return unwatch();
      heartbeat = setInterval(() => void idle(), opts.heartbeatMs ?? 15_000);
      await pump();

      // While idle: a heartbeat, and the end of a stream whose invocation ended with its terminal
      // event behind the cursor (or expired): its status is written with that event, atomically.
      async function idle(): Promise<void> {
        if (ended) return;
        reply.raw.write(': heartbeat\n\n');
        const status = await redis.hget(keys.invocation(rootOf(id), id), 'status').catch(() => undefined);
        if (status === undefined || (status !== null && !isTerminal(status))) return;
        await pump();
        end();
      }
    },
  );
};

/** True when invocation `id`'s terminal event lies after `cursor` in `stream` (read from the end back). */
async function terminalAfter(redis: MeshRedis, stream: string, id: string, cursor: string): Promise<boolean> {
  for (let max = '+'; ; ) {
    const page = (await redis.xrevrange(stream, max, `(${cursor}`, 'COUNT', PAGE)) as Entry[];
    for (const [, fields] of page) {
      const event = parse(fields[1]);
      if (event?.invocationId === id && isTerminalEvent(event)) return true;
    }
    if (page.length < PAGE) return false;
    max = `(${page.at(-1)![0]}`;
  }
}

/** A `Last-Event-ID` that is a stream entry id Redis accepts, else undefined (read from the start). */
function streamId(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || !/^\d{1,20}-\d{1,20}$/.test(header)) return undefined;
  const max = 2n ** 64n - 1n;
  const [ms, seq] = header.split('-').map(BigInt) as [bigint, bigint];
  return ms <= max && seq <= max ? header : undefined;
}

function parse(text: string | undefined): MeshEvent | undefined {
  try {
    return JSON.parse(text ?? '') as MeshEvent;
  } catch {
    return undefined;
  }
}

/** The last event of an invocation's stream: its output (logs of older versions end there) or terminal status. */
function isTerminalEvent(e: MeshEvent): boolean {
  return e.type === 'output' || isTerminalStatus(e);
}

/** A `status` event with a terminal status: every invocation's stream ends with one. */
function isTerminalStatus(e: MeshEvent): boolean {
  return e.type === 'status' && isTerminal(String((e.data as { status?: string })?.status ?? ''));
}
