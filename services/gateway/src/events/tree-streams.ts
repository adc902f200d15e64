import { isTerminal, type KeyLayout, rootOf } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { InvocationReader } from '../invocations/invocation-reader.js';
import { deltaStreamInfo } from './delta-stream-info.js';
import type { EventHub, HubRead } from './event-hub.js';
import { compareEntryIds, STREAM_START, type TreePosition } from './tree-position.js';
import { isTerminalStatus, parseEvent, TREE_STREAM_PAGE, TreeStream } from './tree-stream.js';
import type { WatchKeeper } from './watch-keeper.js';

/** What opening tree streams needs from the gateway. */
export interface TreeStreamsDeps {
  /** The shared command connection: a stream catches up with non-blocking XREAD on it. */
  redis: MeshRedis;
  keys: KeyLayout;
  reader: Pick<InvocationReader, 'subtreeIds'>;
  /** Hands streams what their keys gained (one blocking connection per gateway). */
  hub: EventHub;
  /** Keeps the trees with an open delta stream watched. */
  watches: WatchKeeper;
  /** How often an idle stream checks whether its invocation ended (the heartbeat interval). */
  idleMs: number;
}

/** How a tree stream is opened. */
export interface OpenTreeStream {
  /** The invocation streamed (a root or any node): its events and those of all it delegated to. */
  id: string;
  /** With the tree's delta events, merged with the structural ones by Redis entry id. */
  deltas: boolean;
  /**
   * Where to start (`positionOf(Last-Event-ID)`): structural events after `events`, deltas after
   * `deltas` (undefined: from now). Default: structural events from the start, deltas from now.
   */
  from?: TreePosition;
}

type Entry = [string, string[]];

/**
 * The gateway's one way to follow an invocation tree, live (docs/reference/rest-api.md#events):
 * `open()` answers a `TreeStream`, an async iterator of `{id, event, delta}`, for GET
 * /invocations/{id}/events, invoke?stream=true and any protocol that streams a tree (OpenAI chat
 * completions, A2A, MCP progress). A stream:
 * - yields the structural events of the invocation's subtree from `from.events` and, with
 *   `deltas`, the subtree's delta events, merged in Redis entry id order; each item's `id` is the
 *   position after it (composite with deltas), so a client resumes with no gap and no duplicate
 *   while the tree's deltas are kept; deltas trimmed or expired since `from.deltas` resume from now;
 * - ends after the invocation's terminal status (at once when `from` lies at or past it);
 * - takes the entries the event hub read, one XREAD per gateway whatever the number of streams,
 *   and reads Redis itself only to catch up (from an older `from`, or after falling behind);
 * - is pulled: a consumer that stops pulling holds back its reads, so nothing buffers in it (one
 *   page of entries at most); a consumer that writes to a slow client drops deltas itself (see
 *   SseWriter) and may ask `deltasLost()` after it waited;
 * - while open with `deltas`, keeps the tree watched (the runners publish deltas only then);
 * - must be closed (`close()`, or leaving a `for await`) when the consumer is done with it.
 * It does not count toward the stream bounds: a route takes a StreamSlots slot for it.
 */
export class TreeStreams {
  private readonly open_ = new Set<TreeStream>();

  constructor(private readonly deps: TreeStreamsDeps) {}

  /** The number of tree streams open now. */
  get size(): number {
    return this.open_.size;
  }

  /**
   * Opens a tree stream (see the class comment); Redis errors reject. Its reads and its watches go
   * out together, not one after another: a stream opened from the start (`from.events` STREAM_START)
   * cannot lie past the invocation's end, so the status is read only for a resumed one.
   */
  async open(o: OpenTreeStream): Promise<TreeStream> {
    const { redis, keys, hub, watches } = this.deps;
    const root = rootOf(o.id);
    const from = o.from ?? { events: STREAM_START, deltas: undefined };
    const parts = { redis, keys, id: o.id, idleMs: this.deps.idleMs };
    if (from.events !== STREAM_START && (await pastEnd(redis, keys, o.id, from.events))) {
      const deltas = o.deltas ? (from.deltas ?? STREAM_START) : undefined;
      return new TreeStream({
        ...parts,
        subtree: new Set(),
        from: { events: from.events, deltas },
        ended: true,
      });
    }
    // The hub may read the stream's keys before the stream exists: what it hears then, the stream
    // reads itself (its first pull reads from `from`).
    let target: TreeStream | undefined;
    const feed = (read: HubRead) => target?.feed(read);
    const [subtree, deltas, ...held] = await Promise.allSettled([
      this.deps.reader.subtreeIds(o.id),
      o.deltas ? deltaStart(redis, keys.deltas(root), from.deltas) : undefined,
      ...(o.deltas ? [watches.hold(root), hub.watch(keys.deltas(root), feed)] : []),
      hub.watch(keys.events(root), feed),
    ]);
    const cleanups = held.flatMap((h) => (h.status === 'fulfilled' ? [h.value] : []));
    if (subtree.status === 'rejected' || deltas.status === 'rejected' || cleanups.length < held.length) {
      for (const fn of cleanups) fn();
      throw [subtree, deltas, ...held].find((r): r is PromiseRejectedResult => r.status === 'rejected')!
        .reason;
    }
    const stream = new TreeStream({
      ...parts,
      subtree: subtree.value,
      from: { events: from.events, deltas: deltas.value },
    });
    target = stream;
    this.open_.add(stream);
    cleanups.push(() => this.open_.delete(stream));
    for (const fn of cleanups) stream.onClose(fn);
    return stream;
  }

  /** Closes every open stream (the gateway closes). */
  closeAll(): void {
    for (const stream of [...this.open_]) stream.close();
  }
}

/**
 * Where a delta stream starts: after `after` while every delta since is kept, else (the stream was
 * trimmed past it: its first entry is newer) from now; without `after`, from now. A stream that
 * expired and started again lost nothing the client could still get: it resumes after `after`.
 */
async function deltaStart(redis: MeshRedis, key: string, after: string | undefined): Promise<string> {
  const info = await deltaStreamInfo(redis, key);
  if (!info) return after ?? STREAM_START;
  if (after === undefined) return info.lastGenerated;
  const lost = info.trimmedBefore !== undefined && compareEntryIds(after, info.trimmedBefore) < 0;
  return lost ? info.lastGenerated : after;
}

/** True when invocation `id` has ended and its terminal event lies at or before `cursor`: nothing to stream. */
async function pastEnd(redis: MeshRedis, keys: KeyLayout, id: string, cursor: string): Promise<boolean> {
  const status = await redis.hget(keys.invocation(rootOf(id), id), 'status');
  return (
    status !== null &&
    isTerminal(status) &&
    !(await terminalAfter(redis, keys.events(rootOf(id)), id, cursor))
  );
}

/** True when invocation `id`'s terminal event lies after `cursor` in `stream` (read from the end back). */
async function terminalAfter(redis: MeshRedis, stream: string, id: string, cursor: string): Promise<boolean> {
  for (let max = '+'; ; ) {
    const page = (await redis.xrevrange(stream, max, `(${cursor}`, 'COUNT', TREE_STREAM_PAGE)) as Entry[];
    for (const [, fields] of page) {
      const event = parseEvent(fields[1]);
      if (event?.invocationId === id && (event.type === 'output' || isTerminalStatus(event))) return true;
    }
    if (page.length < TREE_STREAM_PAGE) return false;
    max = `(${page.at(-1)![0]}`;
  }
}
