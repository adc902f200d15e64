import {
  type ApprovalItem,
  type ApprovalPage,
  approvalField,
  decisionField,
  isInvocationId,
  isTerminal,
  type KeyLayout,
  MeshError,
  rootOf,
} from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';

/** A position in the index: newest first, ties (same millisecond) by member, descending. */
interface Position {
  s: number;
  m: string;
}

// Index entries looked at per request at most (stale ones are dropped as they are met).
const MAX_SCAN = 1000;
const BATCH = 100;

/**
 * The caller's pending approvals across trees, newest first by `requestedAt` (docs/guides/approvals-and-budgets.md), from
 * its index (keys.approvalIndex). The index has its own hash tag and is written apart from the
 * trees, so every entry is verified against its tree: one that is decided, gone, or whose
 * invocation ended is dropped from the page and from the index.
 */
export async function listApprovals(
  redis: MeshRedis,
  keys: KeyLayout,
  q: { limit: number; cursor?: string | undefined },
  caller: Caller,
): Promise<ApprovalPage> {
  const index = keys.approvalIndex(caller.owner);
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const items: ApprovalItem[] = [];
  let last: Position | undefined;
  let offset = 0;
  for (let scanned = 0; scanned < MAX_SCAN && items.length <= q.limit; ) {
    const flat = await redis.zrevrangebyscore(
      index,
      after ? after.s : '+inf',
      '-inf',
      'WITHSCORES',
      'LIMIT',
      offset,
      BATCH,
    );
    if (flat.length === 0) break;
    offset += flat.length / 2;
    for (let i = 0; i < flat.length && items.length <= q.limit; i += 2) {
      const pos = { m: flat[i]!, s: Number(flat[i + 1]) };
      scanned++;
      if (after && pos.s === after.s && pos.m >= after.m) continue;
      const item = await verify(redis, keys, pos.m, caller);
      if (!item) {
        await redis.zrem(index, pos.m);
        offset--;
        continue;
      }
      if (items.length < q.limit) last = pos;
      items.push(item);
    }
    if (flat.length < BATCH * 2) break;
  }
  const page: ApprovalPage = { items: items.slice(0, q.limit) };
  if (items.length > q.limit && last) page.nextCursor = encodeCursor(last);
  return page;
}

/** The pending approval an index member names, read from its tree; undefined when it is stale. */
async function verify(
  redis: MeshRedis,
  keys: KeyLayout,
  member: string,
  caller: Caller,
): Promise<ApprovalItem | undefined> {
  const [id = '', callId = ''] = member.split(' ');
  if (!isInvocationId(id) || !callId) return undefined;
  const [request, decision, status, agent, owner] = await redis.hmget(
    keys.invocation(rootOf(id), id),
    approvalField(callId),
    decisionField(callId),
    'status',
    'agent',
    'owner',
  );
  if (!request || decision || !status || isTerminal(status) || !caller.sees(owner ?? undefined))
    return undefined;
  try {
    const r = JSON.parse(request) as { name: string; args: unknown; requestedAt: string };
    return {
      invocationId: id,
      rootId: rootOf(id),
      agent: agent ?? '',
      callId,
      name: r.name,
      args: r.args,
      requestedAt: r.requestedAt,
    };
  } catch {
    return undefined;
  }
}

function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.s, p.m])).toString('base64url');
}

function decodeCursor(cursor: string): Position {
  try {
    const [s, m] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [unknown, unknown];
    if (typeof s === 'number' && Number.isFinite(s) && typeof m === 'string') return { s, m };
  } catch {}
  throw new MeshError('invalid_input', 'The cursor is not one this API gave out.', [
    { path: '/cursor', message: 'unknown cursor' },
  ]);
}
