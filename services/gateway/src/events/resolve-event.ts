import {
  type CallRecord,
  type KeyLayout,
  type MeshEvent,
  readOutputJson,
  readTreeTexts,
  recordTextRefs,
  recordWithTexts,
  rootOf,
} from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * An event as clients receive it (docs/reference/rest-api.md, docs/guides/streaming.md): a large text that its writer stored once and
 * only referred to (`outputRef` on an `output` event, `contentRef` on a `model_call`; see
 * EVENT_INLINE_BYTES) is read back from where it lives, the invocation's state or its model call's
 * record, which hold it or refer in turn to the tree's texts. Once those have expired the reference
 * stays, and the text is absent.
 */
export async function resolveEvent(redis: MeshRedis, keys: KeyLayout, event: MeshEvent): Promise<MeshEvent> {
  const data = event.data as Record<string, unknown> | null;
  if (typeof data !== 'object' || data === null) return event;
  const id = event.invocationId;
  if (event.type === 'output' && data.outputRef === true) {
    const json = await readOutputJson(redis, keys, id);
    if (json === undefined) return event;
    const { outputRef: _, ...rest } = data;
    return { ...event, data: { ...rest, output: JSON.parse(json) as unknown } };
  }
  if (event.type === 'model_call' && data.contentRef === true && typeof data.callId === 'string') {
    const content = await replyContent(redis, keys, id, data.callId);
    if (content === undefined) return event;
    const { contentRef: _, toolCalls, ...rest } = data;
    return { ...event, data: { ...rest, content, toolCalls } };
  }
  return event;
}

/** A model call's reply text, from its record and, for a large one, the tree's texts. */
async function replyContent(
  redis: MeshRedis,
  keys: KeyLayout,
  id: string,
  callId: string,
): Promise<string | null | undefined> {
  const text = await redis.hget(keys.calls(rootOf(id), id), callId);
  if (text === null) return undefined;
  const record = JSON.parse(text) as CallRecord;
  const texts = await readTreeTexts(redis, keys, rootOf(id), recordTextRefs([record]));
  const reply = recordWithTexts(record, texts).reply;
  return reply?.contentRef === undefined ? reply?.content : undefined;
}
