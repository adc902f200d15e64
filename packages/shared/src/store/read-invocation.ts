import { rootOf } from '../ids.js';
import type { KeyLayout } from '../keys.js';
import type { CallRecord } from '../wire/call-record.js';
import { decodeCalls, decodeInvocation, type InvocationState } from './invocation-state.js';

/** The part of an ioredis client reading an invocation needs. */
export interface HashReader {
  hgetall(key: string): Promise<Record<string, string>>;
}

/** Reads an invocation's state and call records (two reads), or undefined when it does not exist. */
export async function readInvocation(
  redis: HashReader,
  keys: KeyLayout,
  id: string,
): Promise<{ state: InvocationState; calls: CallRecord[] } | undefined> {
  const root = rootOf(id);
  const [hash, calls] = await Promise.all([
    redis.hgetall(keys.invocation(root, id)),
    redis.hgetall(keys.calls(root, id)),
  ]);
  if (!hash || Object.keys(hash).length === 0) return undefined;
  return { state: decodeInvocation(hash), calls: decodeCalls(calls) };
}
