import {
  type CallRecord,
  decodeCalls,
  decodeInvocation,
  type InvocationState,
  type KeyLayout,
  readTreeTexts,
  recordTextRefs,
  recordWithTexts,
  textRefsIn,
} from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Activation } from './activation.js';

// The runner's reads of a tree with its texts put back (a large reply, result or answer, stored
// once per tree: tree-texts.ts), so a replay's model, a parent and a code agent see them whole.
// Each costs one more read, only when something refers to a text.

/** Puts back the texts the records ACTIVATE read refer to. */
export async function putTextsBack(redis: MeshRedis, keys: KeyLayout, activation: Activation): Promise<void> {
  const refs = recordTextRefs(activation.records.values());
  if (refs.length === 0) return;
  const texts = await readTreeTexts(redis, keys, activation.state.rootId, refs);
  for (const [id, r] of activation.records) activation.records.set(id, recordWithTexts(r, texts));
}

/** Reads an invocation's call records, in call order. */
export async function readRecords(
  redis: MeshRedis,
  keys: KeyLayout,
  rootId: string,
  id: string,
): Promise<CallRecord[]> {
  const flat = await redis.hgetall(keys.calls(rootId, id));
  const texts = await readTreeTexts(redis, keys, rootId, textRefsIn(undefined, Object.values(flat)));
  return decodeCalls(flat, texts);
}

/** Reads an invocation's state (its output whole); undefined when it is gone. */
export async function readState(
  redis: MeshRedis,
  keys: KeyLayout,
  rootId: string,
  id: string,
): Promise<InvocationState | undefined> {
  const h = await redis.hgetall(keys.invocation(rootId, id));
  if (Object.keys(h).length === 0) return undefined;
  return decodeInvocation(h, await readTreeTexts(redis, keys, rootId, textRefsIn(h, [])));
}
