import type { Cluster, Redis } from 'ioredis';
import { SESSION_MAX_INVOCATIONS, SESSION_MAX_MESSAGES, SESSION_MAX_QUEUED } from '../defaults.js';
import { MeshError } from '../errors/mesh-error.js';
import type { KeyLayout } from '../keys.js';
import type { LuaScript } from './lua-scripts.js';
import { boundHistory, type SessionMessage } from './session-message.js';
import { SESSION_CLAIM, SESSION_DELETE, SESSION_HAND_OFF } from './session-scripts.js';

/** What a second invoke does while one of the session runs (`?multitask=`, DESIGN §12). */
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

/** A session's state in Redis: binding, history, and the queue of its invocations (DESIGN §12). */
export class SessionStore {
  private readonly claimScript: Caller;
  private readonly handOffScript: Caller;
  private readonly deleteScript: Caller;

  constructor(
    readonly redis: Redis | Cluster,
    readonly keys: KeyLayout,
    readonly ttlSeconds: number,
  ) {
    const define = (name: string, script: LuaScript): Caller => {
      redis.defineCommand(name, script);
      const host = redis as unknown as Record<string, Caller>;
      return (...args) => host[name]!.call(redis, ...args);
    };
    this.claimScript = define('mesh_sessionClaim', SESSION_CLAIM);
    this.handOffScript = define('mesh_sessionHandOff', SESSION_HAND_OFF);
    this.deleteScript = define('mesh_sessionDelete', SESSION_DELETE);
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

  /** The session's invocation ids and messages, oldest first. */
  async lists(id: string): Promise<{ invocations: string[]; messages: SessionMessage[] }> {
    const [invocations, messages] = await Promise.all([
      this.redis.lrange(this.keys.sessionInvocations(id), 0, -1),
      this.redis.lrange(this.keys.sessionMessages(id), 0, -1),
    ]);
    return { invocations, messages: messages.map((m) => JSON.parse(m) as SessionMessage) };
  }

  /** The history the session's next invocation sees: its messages, oldest first, bounded. */
  async history(id: string): Promise<SessionMessage[]> {
    const list = await this.redis.lrange(this.keys.sessionMessages(id), 0, -1);
    return boundHistory(list.map((m) => JSON.parse(m) as SessionMessage));
  }

  /**
   * Hands the session on from `finishedId` (see SESSION_HAND_OFF): the next current invocation's
   * id, '' when none waits, or undefined when `finishedId` was not current.
   */
  async handOff(
    id: string,
    finishedId: string,
    exchange: readonly SessionMessage[],
    forget = false,
  ): Promise<string | undefined> {
    const next = await this.handOffScript(
      ...sessionKeys(this.keys, id),
      finishedId,
      Date.now(),
      this.ttlSeconds,
      SESSION_MAX_MESSAGES,
      forget ? '1' : '0',
      ...exchange.map((m) => JSON.stringify(m)),
    );
    return typeof next === 'string' ? next : undefined;
  }

  /** Deletes the session read as `meta`; returns the ids that still waited in its queue. */
  async delete(meta: SessionMeta): Promise<string[]> {
    const waiting = await this.deleteScript(...sessionKeys(this.keys, meta.id), String(meta.createdAt));
    return Array.isArray(waiting) ? (waiting as string[]) : [];
  }
}
