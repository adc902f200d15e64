import {
  type CallRecord,
  decodeCalls,
  decodeInvocation,
  type InvocationState,
  type KeyLayout,
  rootOf,
} from '@agentmesh/shared';
import type { Redis } from 'ioredis';

// The largest epoch milliseconds a JS Date holds (ECMA-262 §21.4.1.1); past it toISOString throws.
const MAX_DATE_MS = 8.64e15;
const DATE_FIELDS = ['createdAt', 'deadline', 'startedAt', 'finishedAt'] as const;

/**
 * An invocation hash made readable whatever was stored in it: a date past what `Date` holds is
 * clamped (an unparsable one dropped, or 0 when required), a field of JSON that does not parse
 * reads as null (an error as `internal`). A stored value must never turn a read into a 500.
 */
export function sanitizeInvocationHash(h: Record<string, string>): Record<string, string> {
  const out = { ...h };
  for (const f of DATE_FIELDS) {
    if (out[f] === undefined || out[f] === '') continue;
    const n = Number(out[f]);
    if (!Number.isFinite(n)) {
      if (f === 'startedAt' || f === 'finishedAt') delete out[f];
      else out[f] = f === 'deadline' ? String(MAX_DATE_MS) : '0';
    } else if (Math.abs(n) > MAX_DATE_MS) out[f] = String(Math.sign(n) * MAX_DATE_MS);
  }
  for (const f of ['input', 'output'] as const) {
    if (out[f] !== undefined && !parses(out[f])) out[f] = 'null';
  }
  if (out.error !== undefined && !parses(out.error))
    out.error = JSON.stringify({ code: 'internal', message: 'The stored error is unreadable.' });
  return out;
}

/** A calls hash without the records that do not parse. */
function sanitizeCalls(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([, text]) => parses(text)));
}

/** Reads an invocation (state and call records), tolerant of unreadable stored values; undefined when absent. */
export async function readInvocationSafely(
  redis: Redis,
  keys: KeyLayout,
  id: string,
): Promise<{ state: InvocationState; calls: CallRecord[] } | undefined> {
  const root = rootOf(id);
  const [hash, calls] = await Promise.all([
    redis.hgetall(keys.invocation(root, id)),
    redis.hgetall(keys.calls(root, id)),
  ]);
  if (!hash || Object.keys(hash).length === 0) return undefined;
  return { state: decodeInvocation(sanitizeInvocationHash(hash)), calls: decodeCalls(sanitizeCalls(calls)) };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
