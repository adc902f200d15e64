import { AsyncResource } from 'node:async_hooks';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Redis } from 'ioredis';
import { type ReadLanes, readLanes } from './read-lanes.js';

/** One stream entry as XREAD answers it: its id and its fields. */
export type StreamEntry = [id: string, fields: string[]];

/** Entries the hub reads per key per XREAD: a key with this many may have more (HubRead). */
export const HUB_PAGE = 50;

/**
 * What one read of the hub found: for each key it read, the id the read started after (the last
 * the hub had seen of it) and the entries after that, at most HUB_PAGE (none: the key is absent from
 * `entries`). A listener of one key gets the read once per key of it that grew: the entries of
 * every key read, so a stream of two keys (a tree's events and deltas) takes both at once.
 */
export interface HubRead {
  readonly after: ReadonlyMap<string, string>;
  readonly entries: ReadonlyMap<string, readonly StreamEntry[]>;
}

/** Who hears of a watched key's new entries. */
export type HubListener = (read: HubRead) => void;

/** One stream key being watched: the last entry id the hub has seen, and who to tell. */
interface Watched {
  lastSeen: string;
  listeners: Set<HubListener>;
}

/** One blocking reader: the keys of one Redis server (read-lanes.ts). */
interface Lane {
  readonly id: string;
  blocked: boolean;
  generation: number;
  /** Counts kicks: a read whose keys were gathered before the last kick starts over. */
  kicks: number;
  /** The connection `readerId` belongs to (a cluster may hand out a new one after a drop). */
  connection: Redis | undefined;
  readerId: number | undefined;
  wake: (() => void) | undefined;
}

/** One stream's new entries, as XREAD answers them. */
type Reply = [string, StreamEntry[]];

/** How often a lane reading several slots of one cluster node polls them (see `poll`). */
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Hands open event streams what their tree's streams gained, over ONE reader connection per gateway
 * and Redis server, whatever the number of streams (docs/reference/bounds.md: streams must not take
 * Redis's clients). A lane (one server, or one master of a cluster) XREADs the watched keys of its
 * server and gives each listener the entries it read (HubRead), so an entry is read once per
 * gateway however many watch it; a stream that is behind (it resumes from an older id, or its
 * consumer held it back) reads its own entries with non-blocking XREAD on the shared command
 * connection until it catches up. On one server (or while a node's keys share one slot) the read
 * blocks, and a key watched anew wakes it (CLIENT UNBLOCK) so it is included at once; a cluster
 * node whose keys span slots is polled instead (`poll`).
 */
export class EventHub {
  private readonly watched = new Map<string, Watched>();
  private readonly lanes = new Map<string, Lane>();
  private readonly routes: ReadLanes;
  private closed = false;

  constructor(
    /** A connection (or cluster client) of its own: it spends its life blocked in XREAD. */
    private readonly reader: MeshRedis,
    /** The gateway's shared command connection. */
    private readonly commands: MeshRedis,
    private readonly blockMs = 10_000,
  ) {
    this.routes = readLanes(reader, commands);
    reader.on('reconnecting', () => {
      for (const lane of this.lanes.values()) lane.readerId = undefined;
    });
  }

  /** Starts reading (each lane's loop runs until `close`). */
  start(): void {
    this.rehome();
  }

  /** Stops the loops and drops the reader connection. */
  close(): void {
    this.closed = true;
    for (const lane of this.lanes.values()) lane.wake?.();
    this.reader.disconnect();
  }

  /** The number of distinct keys watched now. */
  get size(): number {
    return this.watched.size;
  }

  /** The number of blocking readers (lanes) started so far: one per Redis server read from. */
  get readers(): number {
    return this.lanes.size;
  }

  /**
   * Calls `onNew` with the hub's read whenever entries are appended to `key` after this call
   * resolves, in the caller's async context (its request's trace: not that of whichever request
   * started the lane); returns the function that stops it. Entries already there are the caller's
   * to read.
   */
  async watch(key: string, onNew: HubListener): Promise<() => void> {
    let w = this.watched.get(key);
    if (!w) {
      const last = (await this.commands.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][];
      w = this.watched.get(key);
      if (!w) {
        w = { lastSeen: last[0]?.[0] ?? '0-0', listeners: new Set() };
        this.watched.set(key, w);
        this.kick(this.routes.laneOf(key));
      }
    }
    const entry = w;
    const listener = AsyncResource.bind(onNew);
    entry.listeners.add(listener);
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.watched.get(key) === entry) this.watched.delete(key);
    };
  }

  private async loop(lane: Lane): Promise<void> {
    while (!this.closed) {
      const kicks = lane.kicks;
      const groups = new Map<number, string[]>();
      for (const key of this.watched.keys()) {
        if (this.routes.laneOf(key) !== lane.id) continue;
        const group = this.routes.groupOf(key);
        groups.set(group, [...(groups.get(group) ?? []), key]);
      }
      if (groups.size === 0) {
        await new Promise<void>((r) => (lane.wake = r));
        lane.wake = undefined;
        continue;
      }
      let replies: Reply[];
      // The ids the read starts after, taken with the keys: a key watched meanwhile is not in it.
      const after = new Map<string, string>();
      for (const keys of groups.values()) {
        for (const key of keys) after.set(key, this.watched.get(key)!.lastSeen);
      }
      try {
        const connection = this.routes.connectionOf(lane.id);
        if (!connection) throw new Error(`no connection to ${lane.id}`);
        if (connection !== lane.connection) [lane.connection, lane.readerId] = [connection, undefined];
        replies =
          groups.size === 1
            ? await this.block(lane, connection, after, kicks)
            : await this.poll(connection, [...groups.values()], after);
      } catch {
        if (this.closed) return;
        // Redis is away (streams end on their own failed reads), or a cluster moved slots: read
        // again with a fresh slot map, every key in the lane that now serves it.
        this.routes.refresh();
        await sleep(250);
        this.rehome();
        continue;
      }
      let seen = false;
      const read: HubRead = { after, entries: new Map(replies) };
      for (const [key, entries] of replies) {
        const w = this.watched.get(key);
        if (!w || entries.length === 0) continue;
        seen = true;
        w.lastSeen = entries.at(-1)![0];
        for (const notify of w.listeners) notify(read);
      }
      // Polled keys are read again after a pause (or at once when a key is watched anew).
      if (groups.size > 1 && !seen) {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, POLL_MS);
          lane.wake = () => {
            clearTimeout(timer);
            r();
          };
        });
        lane.wake = undefined;
      }
    }
  }

  /**
   * One blocking XREAD of keys one command may read together: the flat case, one slot or one server.
   * A key watched while the reader's id was asked for (a delta stream watches two keys at once)
   * makes it start over with it, instead of blocking without it.
   */
  private async block(
    lane: Lane,
    connection: Redis,
    after: Map<string, string>,
    kicks: number,
  ): Promise<Reply[]> {
    lane.readerId ??= (await connection.client('ID')) as number;
    if (lane.kicks !== kicks) return [];
    lane.generation++;
    lane.blocked = true;
    const streams = [...after.keys(), ...after.values()];
    try {
      return ((await connection.xread('COUNT', HUB_PAGE, 'BLOCK', this.blockMs, 'STREAMS', ...streams)) ??
        []) as Reply[];
    } finally {
      lane.blocked = false;
    }
  }

  /**
   * Keys of several slots of one cluster node: no single XREAD may read them (CROSSSLOT), and a
   * blocking read per slot would take a connection per tree. So one non-blocking XREAD per slot,
   * pipelined on the node's one connection, repeated every POLL_MS while nothing arrives.
   */
  private async poll(connection: Redis, groups: string[][], after: Map<string, string>): Promise<Reply[]> {
    const p = connection.pipeline();
    for (const keys of groups)
      p.xread('COUNT', HUB_PAGE, 'STREAMS', ...keys, ...keys.map((k) => after.get(k)!));
    const replies: Reply[] = [];
    for (const [err, reply] of (await p.exec()) ?? []) {
      if (err) throw err;
      replies.push(...(((reply as Reply[] | null) ?? []) as Reply[]));
    }
    return replies;
  }

  /** Kicks the lane of every watched key, starting lanes not seen before. */
  private rehome(): void {
    const ids = new Set([...this.watched.keys()].map((k) => this.routes.laneOf(k)));
    for (const id of ids) this.kick(id);
  }

  /**
   * Makes a lane start over with its current keys: starts it when new, wakes it when idle,
   * unblocks its XREAD. A key of no known lane yet (a cluster's slot map is loading) waits for
   * the next rehome.
   */
  private kick(id: string | undefined): void {
    if (this.closed) return;
    if (id === undefined) {
      void sleep(250).then(() => this.rehome());
      return;
    }
    let lane = this.lanes.get(id);
    if (!lane) {
      lane = {
        id,
        blocked: false,
        generation: 0,
        kicks: 0,
        connection: undefined,
        readerId: undefined,
        wake: undefined,
      };
      this.lanes.set(id, lane);
      void this.loop(lane);
      return;
    }
    lane.kicks++;
    lane.wake?.();
    if (lane.blocked) void this.unblock(lane, lane.generation);
  }

  /** CLIENT UNBLOCK the lane's reader; retried briefly when the XREAD has not reached Redis yet. */
  private async unblock(lane: Lane, generation: number): Promise<void> {
    for (let i = 0; i < 40 && lane.blocked && lane.generation === generation; i++) {
      const id = lane.readerId;
      const done = id === undefined ? 0 : await this.routes.unblock(lane.id, id).catch(() => 0);
      if (done === 1) return;
      await sleep(5);
    }
  }
}
