import { isTerminal, type KeyLayout, type MeshEvent, rootOf } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
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

type Reply = [string, [string, string[]][]][];

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
 * pulled, so a consumer that stops pulling holds back the reads, never a buffer; it ends after the
 * invocation's terminal status, or when `close()` is called.
 */
export class TreeStream implements AsyncIterableIterator<TreeStreamItem> {
  private readonly position: TreePosition;
  private readonly withDeltas: boolean;
  private readonly eventsKey: string;
  private readonly deltasKey: string;
  private readonly entries: Entry[] = [];
  private readonly cleanups: (() => void)[] = [];
  private closed = false;
  private finished: boolean;
  private dirty = true;
  private caughtUp = false;
  private outputSeen = false;
  private endAsked = false;
  private ending = false;
  private wake: (() => void) | undefined;
  private readonly idle: NodeJS.Timeout | undefined;

  constructor(private readonly p: TreeStreamParts) {
    this.position = { ...p.from };
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

  /** Tells it its streams grew (the event hub's callback). */
  readonly notify = (): void => {
    this.dirty = true;
    this.wake?.();
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
      if (!this.dirty) await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
      if (this.closed) break;
      this.dirty = false;
      const asked = this.endAsked;
      this.caughtUp = await this.read();
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

  /** Reads the next page of both streams, merged by entry id; true when neither page was full. */
  private async read(): Promise<boolean> {
    const { events, deltas } = this.position;
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
    for (let i = 0, j = 0; i < e.length || j < d.length; ) {
      const fromEvents = j >= d.length || (i < e.length && compareEntryIds(e[i]![0], d[j]![0]) <= 0);
      const [id, fields] = fromEvents ? e[i++]! : d[j++]!;
      if (horizon !== undefined && compareEntryIds(id, horizon) > 0) break;
      this.entries.push({ from: fromEvents ? 'events' : 'deltas', id, fields });
    }
    return horizon === undefined;
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
    this.notify();
  }
}

/**
 * What XINFO STREAM says of a tree's delta stream (undefined when it does not exist): its last id,
 * and when entries were trimmed from it, its first (a position before that may have lost deltas).
 */
export async function deltaStreamInfo(
  redis: MeshRedis,
  key: string,
): Promise<{ lastGenerated: string; trimmedBefore: string | undefined } | undefined> {
  let reply: unknown[];
  try {
    reply = (await redis.xinfo('STREAM', key)) as unknown[];
  } catch (e) {
    if (/no such key/i.test((e as Error).message)) return undefined;
    throw e;
  }
  const field = (name: string) => {
    const i = reply.indexOf(name);
    return i >= 0 ? reply[i + 1] : undefined;
  };
  const first = field('first-entry') as [string, string[]] | null | undefined;
  const trimmed = Number(field('entries-added')) > Number(field('length'));
  return {
    lastGenerated: String(field('last-generated-id') ?? '0-0'),
    trimmedBefore: trimmed ? (first?.[0] ?? String(field('last-generated-id'))) : undefined,
  };
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
