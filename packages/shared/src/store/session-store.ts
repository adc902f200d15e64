import type { Cluster, Redis } from 'ioredis';
import {
  DEFAULT_SESSION_MAX_BYTES,
  SESSION_MAX_HISTORY_CHARS,
  SESSION_MAX_INVOCATIONS,
  SESSION_MAX_MESSAGES,
  SESSION_MAX_QUEUED,
} from '../defaults.js';
import { MeshError } from '../errors/mesh-error.js';
import { truncateResult } from '../json/truncate-result.js';
import type { KeyLayout } from '../keys.js';
import type { LuaScript } from '../redis/lua-loader.js';
import {
  SESSION_ADVANCE,
  SESSION_CLAIM,
  SESSION_DELETE,
  SESSION_HISTORY,
  SESSION_PAGE,
} from './lua-steps.js';
import { boundHistory, type SessionMessage } from './session-message.js';

/** What a second invoke does while one of the session runs (`?multitask=`, docs/guides/sessions.md). */
export type Multitask = 'enqueue' | 'reject' | 'interrupt';

/** How an invocation was bound to its session. */
export type SessionClaim =
  | { kind: 'start'; history: SessionMessage[] }
  | { kind: 'enqueue' | 'queued'; current: string }
  /** `superseded`: an earlier interrupt still waiting to start, which this one replaces. */
  | { kind: 'interrupt'; current: string; superseded: string | undefined };

/** A session's binding and times, as stored. */
export interface SessionMeta {
  id: string;
  agent: string;
  /** The API key's hash that created it; undefined when auth was off. */
  owner: string | undefined;
  createdAt: number;
  updatedAt: number;
  /** The invocation running (or about to), '' when none. */
  current: string;
  /** When `current` became current (ms). */
  currentSince: number;
}

type Caller = (...args: (string | number)[]) => Promise<unknown>;

/** A session's keys in the order its Lua steps take them. */
function sessionKeys(keys: KeyLayout, id: string): string[] {
  return [keys.session(id), keys.sessionInvocations(id), keys.sessionQueue(id), keys.sessionMessages(id)];
}

/** One page of a session's messages (GET /sessions/{id}): oldest first, and where the next starts. */
export interface SessionPage {
  messages: SessionMessage[];
  /** The position of the next page's first message; absent on the last page. */
  next?: number;
}

/** A session's state in Redis: binding, history, and the queue of its invocations (docs/guides/sessions.md). */
export class SessionStore {
  private readonly claimScript: Caller;
  private readonly advanceScript: Caller;
  private readonly deleteScript: Caller;
  private readonly historyScript: Caller;
  private readonly pageScript: Caller;
  /** Bytes of the session's stored messages (MESH_SESSION_MAX_BYTES). */
  readonly maxBytes: number;

  constructor(
    readonly redis: Redis | Cluster,
    readonly keys: KeyLayout,
    readonly ttlSeconds: number,
    opts: { maxBytes?: number } = {},
  ) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_SESSION_MAX_BYTES;
    const define = (name: string, script: LuaScript): Caller => {
      redis.defineCommand(name, script);
      const host = redis as unknown as Record<string, Caller>;
      return (...args) => host[name]!.call(redis, ...args);
    };
    this.claimScript = define('mesh_sessionClaim', SESSION_CLAIM);
    this.advanceScript = define('mesh_sessionAdvance', SESSION_ADVANCE);
    this.deleteScript = define('mesh_sessionDelete', SESSION_DELETE);
    this.historyScript = define('mesh_sessionHistory', SESSION_HISTORY);
    this.pageScript = define('mesh_sessionPage', SESSION_PAGE);
  }

  /** Bytes of history read for an invocation: the messages a model may receive, within the session's bound. */
  private get historyBytes(): number {
    return Math.min(this.maxBytes, SESSION_MAX_HISTORY_CHARS);
  }

  /**
   * Binds invocation `invocationId` of `agent` to session `id` (created on first use). Throws
   * `session_not_found` for another key's session, `session_conflict` for another agent's, and
   * `session_busy` when one runs and `multitask` is `reject` (or the queue is full). An
   * `interrupt` names the invocation to cancel (`current`) and the earlier interrupt it supersedes.
   */
  async claim(
    id: string,
    opts: { agent: string; owner: string | undefined; invocationId: string; multitask: Multitask },
  ): Promise<SessionClaim> {
    const res = (await this.claimScript(
      ...sessionKeys(this.keys, id),
      id,
      opts.agent,
      opts.owner ?? '',
      opts.owner === undefined ? '1' : '0',
      opts.invocationId,
      opts.multitask,
      Date.now(),
      this.ttlSeconds,
      SESSION_MAX_INVOCATIONS,
      SESSION_MAX_QUEUED,
      this.historyBytes,
    )) as string[];
    const [kind, arg] = res;
    if (kind === 'not_found') throw new MeshError('session_not_found', `No session has id ${id}.`);
    if (kind === 'conflict') {
      throw new MeshError('session_conflict', `Session ${id} belongs to agent ${arg}, not ${opts.agent}.`);
    }
    if (kind === 'busy') {
      throw new MeshError('session_busy', `Session ${id} is running invocation ${arg}.`);
    }
    if (kind === 'full') {
      throw new MeshError(
        'session_busy',
        `Session ${id} is running invocation ${arg} and ${SESSION_MAX_QUEUED} more wait; retry later.`,
      );
    }
    if (kind === 'start') {
      return { kind, history: boundHistory(res.slice(1).map((m) => JSON.parse(m) as SessionMessage)) };
    }
    if (kind === 'interrupt') return { kind, current: arg!, superseded: res[2] || undefined };
    return { kind: kind as 'enqueue' | 'queued', current: arg! };
  }

  /** The session's binding and times, or undefined when there is none. */
  async meta(id: string): Promise<SessionMeta | undefined> {
    const h = await this.redis.hgetall(this.keys.session(id));
    if (h.v !== '1') return undefined;
    return {
      id,
      agent: h.agent ?? '',
      owner: h.owner ? h.owner : undefined,
      createdAt: Number(h.createdAt),
      updatedAt: Number(h.updatedAt),
      current: h.current ?? '',
      currentSince: Number(h.currentSince ?? h.createdAt),
    };
  }

  /** The session's invocation ids, oldest first (at most SESSION_MAX_INVOCATIONS). */
  invocations(id: string): Promise<string[]> {
    return this.redis.lrange(this.keys.sessionInvocations(id), 0, -1);
  }

  /**
   * One page of the session's messages, oldest first: from position `from` (0: the oldest kept),
   * at most `limit` messages, stopping before the one that would pass `maxBytes` (at least one).
   */
  async page(id: string, from: number, limit: number, maxBytes: number): Promise<SessionPage> {
    const res = (await this.pageScript(
      this.keys.session(id),
      this.keys.sessionMessages(id),
      from,
      limit,
      maxBytes,
    )) as (string | number)[];
    const [dropped, length, first] = res.slice(0, 3).map(Number) as [number, number, number];
    const messages = (res.slice(3) as string[]).map((m) => JSON.parse(m) as SessionMessage);
    const next = first + messages.length;
    return next < dropped + length ? { messages, next } : { messages };
  }

  /** The history the session's next invocation sees: its newest messages, oldest first, bounded. */
  async history(id: string): Promise<SessionMessage[]> {
    const list = (await this.historyScript(this.keys.sessionMessages(id), this.historyBytes)) as string[];
    return boundHistory(list.map((m) => JSON.parse(m) as SessionMessage));
  }

  /**
   * Advances the session past `finishedId` (see SESSION_ADVANCE): the next current invocation's
   * id, '' when none waits, or undefined when `finishedId` was not current.
   */
  async advance(
    id: string,
    finishedId: string,
    exchange: readonly SessionMessage[],
    forget = false,
  ): Promise<string | undefined> {
    // Each message within a quarter of the bound, so an exchange always fits (docs/guides/sessions.md).
    const cut = Math.floor(this.maxBytes / 4);
    const next = await this.advanceScript(
      ...sessionKeys(this.keys, id),
      finishedId,
      Date.now(),
      this.ttlSeconds,
      SESSION_MAX_MESSAGES,
      forget ? '1' : '0',
      this.maxBytes,
      ...exchange.map((m) => JSON.stringify({ ...m, content: truncateResult(m.content, cut) })),
    );
    return typeof next === 'string' ? next : undefined;
  }

  /** Deletes the session read as `meta`; returns the ids that still waited in its queue. */
  async delete(meta: SessionMeta): Promise<string[]> {
    const waiting = await this.deleteScript(...sessionKeys(this.keys, meta.id), String(meta.createdAt));
    return Array.isArray(waiting) ? (waiting as string[]) : [];
  }
}
