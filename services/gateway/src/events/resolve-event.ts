import { type CallRecord, type KeyLayout, type MeshEvent, rootOf } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * An event as clients receive it (docs/reference/rest-api.md, docs/guides/streaming.md): a large text that its writer stored once and
 * only referred to (`outputRef` on an `output` event, `contentRef` on a `model_call`; see
 * EVENT_INLINE_BYTES) is read back from where it lives, the invocation's state or its model call's
 * record. Once those have expired the reference stays, and the text is absent.
 */
export async function resolveEvent(redis: MeshRedis, keys: KeyLayout, event: MeshEvent): Promise<MeshEvent> {
  const data = event.data as Record<string, unknown> | null;
  if (typeof data !== 'object' || data === null) return event;
  const id = event.invocationId;
  if (event.type === 'output' && data.outputRef === true) {
    const text = await redis.hget(keys.invocation(rootOf(id), id), 'output');
    if (text === null) return event;
    const { outputRef: _, ...rest } = data;
    return { ...event, data: { ...rest, output: JSON.parse(text) as unknown } };
  }
  if (event.type === 'model_call' && data.contentRef === true && typeof data.callId === 'string') {
    const text = await redis.hget(keys.calls(rootOf(id), id), data.callId);
    const content = text === null ? undefined : (JSON.parse(text) as CallRecord).reply?.content;
    if (content === undefined) return event;
    const { contentRef: _, toolCalls, ...rest } = data;
    return { ...event, data: { ...rest, content, toolCalls } };
  }
  return event;
}
