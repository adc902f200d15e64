import type { Redis } from 'ioredis';

/** One stream key being watched: the last entry id the hub has seen, and who to tell. */
interface Watched {
  lastSeen: string;
  listeners: Set<() => void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Tells open event streams that their tree's log grew, over ONE blocking Redis connection per
 * gateway, whatever the number of streams (DESIGN §16: streams must not take Redis's clients).
 * The hub XREADs every watched key at once and only notifies; each stream reads its own entries
 * with non-blocking XRANGE on the shared command connection, at its own pace. A key watched anew
 * wakes the blocked read (CLIENT UNBLOCK) so it is included at once.
 *
 * One multi-key XREAD assumes one Redis node; on a cluster the keys would be read per node.
 */
export class EventHub {
  private readonly watched = new Map<string, Watched>();
  private closed = false;
  private blocked = false;
  private generation = 0;
  private readerId: number | undefined;
  private wake: (() => void) | undefined;

  constructor(
    /** A connection of its own: it spends its life blocked in XREAD. */
    private readonly reader: Redis,
    /** The gateway's shared command connection. */
    private readonly commands: Redis,
    private readonly blockMs = 10_000,
  ) {
    reader.on('reconnecting', () => (this.readerId = undefined));
  }

  /** Starts the read loop (it runs until `close`). */
  start(): void {
    void this.loop();
  }

  /** Stops the loop and drops the reader connection. */
  close(): void {
    this.closed = true;
    this.wake?.();
    this.reader.disconnect();
  }

  /** The number of distinct keys watched now. */
  get size(): number {
    return this.watched.size;
  }

  /**
   * Calls `onNew` whenever entries are appended to `key` after this call resolves; returns the
   * function that stops it. Entries already there are the caller's to read (XRANGE).
   */
  async watch(key: string, onNew: () => void): Promise<() => void> {
    let w = this.watched.get(key);
    if (!w) {
      const last = (await this.commands.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][];
      w = this.watched.get(key);
      if (!w) {
        w = { lastSeen: last[0]?.[0] ?? '0-0', listeners: new Set() };
        this.watched.set(key, w);
        this.kick();
      }
    }
    const entry = w;
    entry.listeners.add(onNew);
    return () => {
      entry.listeners.delete(onNew);
      if (entry.listeners.size === 0 && this.watched.get(key) === entry) this.watched.delete(key);
    };
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      if (this.watched.size === 0) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      const keys = [...this.watched.keys()];
      const ids = keys.map((k) => this.watched.get(k)!.lastSeen);
      let res: [string, [string, string[]][]][] | null;
      try {
        this.readerId ??= (await this.reader.client('ID')) as number;
        this.generation++;
        this.blocked = true;
        res = (await this.reader.xread('COUNT', 50, 'BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids)) as
          | [string, [string, string[]][]][]
          | null;
      } catch {
        if (this.closed) return;
        await sleep(250); // Redis is away; streams end on their own failed reads
        continue;
      } finally {
        this.blocked = false;
      }
      for (const [key, entries] of res ?? []) {
        const w = this.watched.get(key);
        if (!w || entries.length === 0) continue;
        w.lastSeen = entries.at(-1)![0];
        for (const notify of w.listeners) notify();
      }
    }
  }

  /** Makes the loop start over with the current keys: wakes it when idle, unblocks its XREAD. */
  private kick(): void {
    this.wake?.();
    if (this.blocked) void this.unblock(this.generation);
  }

  /** CLIENT UNBLOCK the reader; retried briefly when the XREAD has not reached Redis yet. */
  private async unblock(generation: number): Promise<void> {
    for (let i = 0; i < 40 && this.blocked && this.generation === generation; i++) {
      const id = this.readerId;
      const done = id === undefined ? 0 : await this.commands.client('UNBLOCK', id).catch(() => 0);
      if (done === 1) return;
      await sleep(5);
    }
  }
}
