import {
  decodeInvocation,
  type InvocationStatus,
  isRootId,
  type KeyLayout,
  MeshError,
  toInvocationView,
} from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';
import { type InvocationSummary, SUMMARY_FIELDS, toSummary } from './invocation-summary.js';
import { sanitizeInvocationHash } from './read-invocation-safely.js';

/** What `GET /invocations` asks for, already checked. */
export interface ListQuery {
  agent?: string | undefined;
  status?: InvocationStatus | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** A position in the `recent` set: newest first, ties (same millisecond) by id, descending. */
interface Position {
  s: number;
  id: string;
}

// Entries looked at per request at most: with a narrow filter a page may hold fewer than `limit`
// items and still have a `nextCursor`, so a request never scans the whole set.
const MAX_SCAN = 1000;

/**
 * Recent root invocations, newest first, from the `recent` sorted set (score = createdAt), filtered
 * by agent, status and (with auth on) owner. Entries whose invocation has expired are skipped and
 * removed from the set.
 */
export async function listInvocations(
  redis: MeshRedis,
  keys: KeyLayout,
  q: ListQuery,
  caller: Caller,
): Promise<{ items: InvocationSummary[]; nextCursor?: string }> {
  const items: InvocationSummary[] = [];
  const expired: string[] = [];
  let last: Position | undefined;
  let scanned = 0;
  let more = false;
  for await (const batch of scan(redis, keys.recent(), decodeCursor(q.cursor), Math.max(q.limit, 20))) {
    // One read per root, sent together: each tree has its own hash tag (its own cluster slot).
    const hashes = await Promise.all(
      batch.map((e) => redis.hmget(keys.invocation(e.id, e.id), ...SUMMARY_FIELDS)),
    );
    for (const [i, e] of batch.entries()) {
      const values = hashes[i]!;
      last = e;
      scanned++;
      const h = Object.fromEntries(
        SUMMARY_FIELDS.map((f, j) => [f, (values as (string | null)[])[j]]).filter(([, v]) => v !== null),
      ) as Record<string, string>;
      if (h.v === undefined) expired.push(e.id);
      else {
        const s = decodeInvocation(sanitizeInvocationHash(h));
        const wanted = (!q.agent || s.agent === q.agent) && (!q.status || s.status === q.status);
        if (wanted && caller.sees(s.owner)) items.push(toSummary(toInvocationView(s, [])));
      }
      more = items.length === q.limit || scanned >= MAX_SCAN;
      if (more) break;
    }
    if (more) break;
  }
  if (expired.length > 0) await redis.zrem(keys.recent(), ...expired);
  return more && last ? { items, nextCursor: encodeCursor(last) } : { items };
}

/**
 * Yields the set's entries after `from`, newest first, in batches. It pages by score, never by
 * offset, so entries removed meanwhile shift nothing; more than `size` entries of one millisecond
 * are read as a whole.
 */
async function* scan(redis: MeshRedis, key: string, from: Position | undefined, size: number) {
  let max = from ? String(from.s) : '+inf';
  let after = from;
  for (;;) {
    const all = pairs(await redis.zrevrangebyscore(key, max, '-inf', 'WITHSCORES', 'LIMIT', 0, size));
    const a = after;
    const fresh = a ? all.filter((e) => e.s < a.s || e.id < a.id) : all;
    if (fresh.length === 0 && all.length === size && a) {
      const tie = await redis.zrevrangebyscore(key, a.s, a.s);
      yield tie.filter((id) => id < a.id).map((id) => ({ s: a.s, id }));
      max = `(${a.s}`;
      after = undefined;
      continue;
    }
    if (fresh.length === 0) return;
    yield fresh;
    after = fresh.at(-1)!;
    max = String(after.s);
    if (all.length < size) return;
  }
}

function pairs(flat: string[]): Position[] {
  const out: Position[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i]!, s: Number(flat[i + 1]) });
  return out;
}

/** An opaque cursor: base64url of `[score, id]`. */
function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.s, p.id])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [s, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof s === 'number' && Number.isSafeInteger(s) && typeof id === 'string' && isRootId(id))
      return { s, id };
  } catch {
    // reported below
  }
  throw new MeshError('invalid_input', 'Invalid querystring: cursor is not one this API returned.', [
    { path: '/cursor', message: 'is not a cursor this API returned' },
  ]);
}
