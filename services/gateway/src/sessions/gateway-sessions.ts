import { MeshError, type MeshPlan, SESSION_PAGE_MAX_BYTES, type SessionMessage } from '@agentmesh/shared';
import {
  type Multitask,
  type SessionClaim,
  type SessionMeta,
  type SessionStarter,
  type SessionStore,
  settleSession,
} from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';

/** What `GET /sessions/{id}` answers (docs/guides/sessions.md): one page of its messages. */
export interface SessionView {
  id: string;
  agent: string;
  createdAt: string;
  updatedAt: string;
  invocations: string[];
  messages: SessionMessage[];
  /** Where the next page of messages starts (`?cursor=`); absent on the last page. */
  nextCursor?: string;
}

/** Which page of messages `GET /sessions/{id}` answers: at most `limit`, from `cursor` (the first page without). */
export interface SessionPageQuery {
  limit: number;
  cursor?: string | undefined;
}

/** The gateway's side of sessions: reading and deleting them for a caller, and settling them. */
export class GatewaySessions {
  private readonly starter: SessionStarter;

  constructor(
    readonly store: SessionStore,
    plan: () => MeshPlan | undefined,
    start: SessionStarter['start'],
  ) {
    this.starter = { agent: (name) => plan()?.agents[name], start };
  }

  /** Brings the session to a consistent state (see settleSession): idempotent, safe to repeat. */
  settle(id: string): Promise<void> {
    return settleSession(this.store, id, this.starter);
  }

  /**
   * Binds a new invocation to session `id` (`?session`, see SessionStore.claim), settling the
   * session first so that an advance a dead runner left undone does not hold the new one back.
   */
  async bind(
    agent: string,
    invocationId: string,
    session: { id: string; multitask: Multitask },
    owner: string | undefined,
  ): Promise<SessionClaim> {
    await this.settle(session.id);
    return this.store.claim(session.id, { agent, owner, invocationId, multitask: session.multitask });
  }

  /** The session when `caller` may see it (the key that created it; any with auth off), else undefined. */
  async metaFor(id: string, caller: Caller): Promise<SessionMeta | undefined> {
    const meta = await this.store.meta(id);
    return meta && caller.sees(meta.owner) ? meta : undefined;
  }

  /**
   * The session's view for `caller` with one page of its messages (oldest first; a page stops at
   * `limit` messages or before SESSION_PAGE_MAX_BYTES of them), settled first (a stale advance
   * shows as done); undefined when unseen.
   */
  async view(id: string, caller: Caller, query: SessionPageQuery): Promise<SessionView | undefined> {
    const from = decodeCursor(query.cursor);
    if (!(await this.metaFor(id, caller))) return undefined;
    await this.settle(id);
    const meta = await this.metaFor(id, caller);
    if (!meta) return undefined;
    const [invocations, page] = await Promise.all([
      this.store.invocations(id),
      this.store.page(id, from, query.limit, SESSION_PAGE_MAX_BYTES),
    ]);
    return {
      id,
      agent: meta.agent,
      createdAt: new Date(meta.createdAt).toISOString(),
      updatedAt: new Date(meta.updatedAt).toISOString(),
      invocations,
      messages: page.messages,
      ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }),
    };
  }

  /**
   * Deletes the session for `caller`: binding and history go, the id is free again. Returns the
   * invocations that were still waiting their turn (the caller cancels them: no turn comes now),
   * or undefined when `caller` sees no such session.
   */
  async remove(id: string, caller: Caller): Promise<string[] | undefined> {
    const meta = await this.metaFor(id, caller);
    if (!meta) return undefined;
    return this.store.delete(meta);
  }
}

/** The hash fields binding a new invocation to its session: the id, and for one that starts now its history. */
export function sessionFields(session: string | undefined, claim: SessionClaim | undefined): string[] {
  if (!session || !claim) return [];
  const fields = ['session', session];
  if (claim.kind === 'start') fields.push('history', JSON.stringify(claim.history));
  return fields;
}

/**
 * The hash field giving a root invocation without a session the history its model sees first (a
 * chat completion's earlier messages); the runner reads it as a session's.
 */
export function historyFields(history: Pick<SessionMessage, 'role' | 'content'>[] | undefined): string[] {
  return history && history.length > 0 ? ['history', JSON.stringify(history)] : [];
}

/** An opaque cursor: base64url of `[position]`, the position of a page's first message. */
function encodeCursor(position: number): string {
  return Buffer.from(JSON.stringify([position])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const [position] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof position === 'number' && Number.isSafeInteger(position) && position >= 0) return position;
  } catch {
    // reported below
  }
  throw new MeshError('invalid_input', 'Invalid querystring: cursor is not one this API returned.', [
    { path: '/cursor', message: 'is not a cursor this API returned' },
  ]);
}
