import { isTerminal, type KeyLayout, type MeshEvent, rootOf } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { deltaStreamInfo } from './delta-stream-info.js';
import { HUB_PAGE, type HubRead, type StreamEntry } from './event-hub.js';
import { resolveEvent } from './resolve-event.js';
import { compareEntryIds, positionId, type TreePosition } from './tree-position.js';

/** One event of a tree stream, in the order of the tree's two Redis streams merged by entry id. */
export interface TreeStreamItem {
  /** Its SSE id: the position right after it (plain without deltas, `<events>_<deltas>` with them). */
  id: string;
  /** The event as clients receive it (large texts put back, resolve-event.ts). */
  event: MeshEvent;
  /** True for a delta (droppable for a slow client); false for a structural event (never dropped). */
  delta: boolean;
}

/** A raw entry of one of the two streams, not yet taken. */
interface Entry {
  from: 'events' | 'deltas';
  id: string;
  fields: string[];
}

type Reply = [string, StreamEntry[]][];

/** Entries read per stream per round trip. */
export const TREE_STREAM_PAGE = 200;

/** What a tree stream is built from (tree-streams.ts builds it). */
export interface TreeStreamParts {
  redis: MeshRedis;
  keys: KeyLayout;
  /** The invocation streamed. */
  id: string;
  /** Its subtree as known at open; grown by the `delegation_started` events read. */
  subtree: Set<string>;
  /** Where it starts; `deltas` set exactly when deltas are streamed. */
  from: TreePosition;
  /** How often, while idle, it checks whether the invocation ended (its terminal event behind it). */
  idleMs: number;
  /** True when there is nothing to stream (a `Last-Event-ID` at or past the terminal event). */
  ended?: boolean;
}

/**
 * The events of an invocation's subtree as an async iterator (see tree-streams.ts for the contract):
 * it ends after the invocation's terminal status, or when `close()` is called. Live, it takes the
 * entries the event hub read (`feed`), so an entry costs no read of its own; it reads Redis itself
 * from its position (a page at a time) to catch up: at open, when a hub read does not follow on
 * what it holds, and when it holds a page its consumer has not pulled (a consumer that stops
 * pulling holds back the reads; nothing buffers past a page).
 */
export class TreeStream implements AsyncIterableIterator<TreeStreamItem> {
  private readonly position: TreePosition;
  private readonly withDeltas: boolean;
  private readonly eventsKey: string;
  private readonly deltasKey: string;
  private readonly entries: Entry[] = [];
  /** The last entry of each stream it holds: taken, or queued in `entries` (from the hub or a read). */
  private readonly held: TreePosition;
  private readonly cleanups: (() => void)[] = [];
  private closed = false;
  private finished: boolean;
  /** True when it must read Redis itself: what it holds may not reach the streams' ends. */
  private dirty = true;
  private reading = false;
  private lastFed: HubRead | undefined;
  private caughtUp = false;
  private outputSeen = false;
  private endAsked = false;
  private ending = false;
  private wake: (() => void) | undefined;
  private readonly idle: NodeJS.Timeout | undefined;

  constructor(private readonly p: TreeStreamParts) {
    this.position = { ...p.from };
    this.held = { ...p.from };
    this.withDeltas = p.from.deltas !== undefined;
    const root = rootOf(p.id);
    this.eventsKey = p.keys.events(root);
    this.deltasKey = p.keys.deltas(root);
    this.finished = p.ended === true;
    if (!this.finished) this.idle = setInterval(() => void this.checkEnded(), p.idleMs);
  }

  /** The position before the next item, as an SSE id (an invoke stream's first event carries it). */
  get positionId(): string {
    return positionId(this.position, this.withDeltas);
  }

  /**
   * Hands it what the event hub read (the hub's callback, once per key of it that grew): queued
   * when the read follows on what it holds with no gap, covers its keys whole and fits its page;
   * else it reads Redis itself, from where it stands.
   */
  readonly feed = (read: HubRead): void => {
    if (read === this.lastFed || this.closed) return;
    this.lastFed = read;
    if (this.reading || !this.admit(read)) this.readAgain();
    else this.wake?.();
  };

  /** Runs `fn` when the stream closes (its hub watches, its tree's watch flag). */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.cleanups.push(fn);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TreeStreamItem> {
    return this;
  }

  async next(): Promise<IteratorResult<TreeStreamItem>> {
    while (!this.closed && !this.finished) {
      const entry = this.entries.shift();
      if (entry) {
        const item = await this.take(entry);
        if (item && !this.closed) return { value: item, done: false };
        continue;
      }
      // FINISH appends an output and its terminal status in one step, so a read that saw the output
      // saw all there is: a log written before status events followed it ends here.
      if (this.caughtUp && (this.outputSeen || this.ending)) break;
      if (!this.dirty) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      this.dirty = false;
      const asked = this.endAsked;
      this.reading = true;
      try {
        this.caughtUp = await this.read();
      } finally {
        this.reading = false;
      }
      if (asked) this.ending = true;
      if (!this.caughtUp) this.dirty = true;
    }
    this.close();
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<TreeStreamItem>> {
    this.close();
    return { value: undefined, done: true };
  }

  /** Ends it: a pending `next()` answers done; its watches are released. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.idle);
    for (const fn of this.cleanups.splice(0)) fn();
    this.wake?.();
  }

  /**
   * True when deltas after its position may have been trimmed away (the tree's delta stream keeps
   * at most 10,000): a consumer that held it back asks, and tells its client `gap: true`.
   */
  async deltasLost(): Promise<boolean> {
    if (this.position.deltas === undefined) return false;
    const info = await deltaStreamInfo(this.p.redis, this.deltasKey);
    return info?.trimmedBefore !== undefined && compareEntryIds(this.position.deltas, info.trimmedBefore) < 0;
  }

  /** Reads the next page of both streams after what it holds; true when neither page was full. */
  private async read(): Promise<boolean> {
    const { events, deltas } = this.held;
    const streams =
      deltas === undefined ? [this.eventsKey, events] : [this.eventsKey, this.deltasKey, events, deltas];
    const reply = ((await this.p.redis.xread('COUNT', TREE_STREAM_PAGE, 'STREAMS', ...streams)) ??
      []) as Reply;
    const page = (key: string) => reply.find(([k]) => k === key)?.[1] ?? [];
    const e = page(this.eventsKey);
    const d = deltas === undefined ? [] : page(this.deltasKey);
    // A full page may be followed by entries older than the other page's last: take entries only up
    // to the last id of a full page, the rest comes with the next read.
    const ends = [e, d].filter((x) => x.length === TREE_STREAM_PAGE).map((x) => x.at(-1)![0]);
    const horizon = ends.sort(compareEntryIds)[0];
    this.queue(e, d, horizon);
    return horizon === undefined;
  }

  /**
   * Queues a hub read's entries of its streams when the read started at or before what it holds
   * (no gap), read each of them whole (no full page) and fits in its page; true when it did.
   */
  private admit(read: HubRead): boolean {
    const e = following(read, this.eventsKey, this.held.events);
    const d = this.held.deltas === undefined ? [] : following(read, this.deltasKey, this.held.deltas);
    if (!e || !d || this.entries.length + e.length + d.length > TREE_STREAM_PAGE) return false;
    this.queue(e, d, undefined);
    // It holds all there was when the hub read: as a read of its own that found no full page.
    this.caughtUp = true;
    return true;
  }

  /** Queues entries of both streams merged by entry id, up to `horizon` when there is one. */
  private queue(e: readonly StreamEntry[], d: readonly StreamEntry[], horizon: string | undefined): void {
    for (let i = 0, j = 0; i < e.length || j < d.length; ) {
      const fromEvents = j >= d.length || (i < e.length && compareEntryIds(e[i]![0], d[j]![0]) <= 0);
      const [id, fields] = fromEvents ? e[i++]! : d[j++]!;
      if (horizon !== undefined && compareEntryIds(id, horizon) > 0) break;
      const from = fromEvents ? 'events' : 'deltas';
      this.entries.push({ from, id, fields });
      this.held[from] = id;
    }
  }

  /** Takes one entry: moves the position past it; the item to send, if it is one for this stream. */
  private async take(entry: Entry): Promise<TreeStreamItem | undefined> {
    const { subtree, id } = this.p;
    this.position[entry.from] = entry.id;
    const event = parseEvent(entry.fields[1]);
    if (!event) return undefined;
    if (entry.from === 'deltas') {
      if (event.type !== 'delta' || !subtree.has(event.invocationId)) return undefined;
      return { id: this.positionId, event, delta: true };
    }
    if (event.type === 'delegation_started' && subtree.has(event.invocationId)) {
      subtree.add((event.data as { childId: string }).childId);
    }
    if (!subtree.has(event.invocationId)) return undefined;
    const at = this.positionId;
    const sent = await resolveEvent(this.p.redis, this.p.keys, event);
    if (event.invocationId === id && isTerminalStatus(event)) this.finished = true;
    if (event.invocationId === id && event.type === 'output') this.outputSeen = true;
    return { id: at, event: sent, delta: false };
  }

  /** While idle: an invocation that ended (or expired) ends the stream once it has read all there is. */
  private async checkEnded(): Promise<void> {
    const { redis, keys, id } = this.p;
    const status = await redis.hget(keys.invocation(rootOf(id), id), 'status').catch(() => undefined);
    if (status === undefined || (status !== null && !isTerminal(status))) return;
    this.endAsked = true;
    this.readAgain();
  }

  /** Makes it read its streams from Redis (what it holds may not reach their ends, or it may end). */
  private readAgain(): void {
    this.dirty = true;
    this.wake?.();
  }
}

/**
 * A key's entries in a hub read that come after `held`, or undefined when the read may miss some:
 * it did not read the key, started after `held` (entries between are not in it), or read a full page.
 */
function following(read: HubRead, key: string, held: string): readonly StreamEntry[] | undefined {
  const after = read.after.get(key);
  const entries = read.entries.get(key) ?? [];
  if (after === undefined || compareEntryIds(after, held) > 0 || entries.length >= HUB_PAGE) return undefined;
  return compareEntryIds(after, held) === 0
    ? entries
    : entries.filter(([id]) => compareEntryIds(id, held) > 0);
}

/** An entry's event, or undefined when it is no JSON object. */
export function parseEvent(text: string | undefined): MeshEvent | undefined {
  try {
    const event = JSON.parse(text ?? '') as MeshEvent;
    return typeof event === 'object' && event !== null ? event : undefined;
  } catch {
    return undefined;
  }
}

/** A `status` event with a terminal status: every invocation's stream ends with one. */
export function isTerminalStatus(e: MeshEvent): boolean {
  return e.type === 'status' && isTerminal(String((e.data as { status?: string })?.status ?? ''));
}
