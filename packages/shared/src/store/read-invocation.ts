import { rootOf } from '../ids.js';
import type { KeyLayout } from '../keys.js';
import type { CallRecord } from '../wire/call-record.js';
import { decodeCalls, decodeInvocation, type InvocationState } from './invocation-state.js';
import { readTreeTexts, type TextReader, textRefsIn } from './tree-texts.js';

/** The part of an ioredis client reading an invocation needs. */
export interface HashReader extends TextReader {
  hgetall(key: string): Promise<Record<string, string>>;
}

/**
 * Reads an invocation's state and call records (two reads, and a third for the tree texts they
 * refer to), or undefined when it does not exist.
 */
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
  const texts = await readTreeTexts(redis, keys, root, textRefsIn(hash, Object.values(calls)));
  return { state: decodeInvocation(hash, texts), calls: decodeCalls(calls, texts) };
}
