import type { Readable } from 'node:stream';
import type { ModelReply } from '@agentmesh/shared';
import type { ReplyListener } from './chat-model.js';
import { SseDataReader } from './sse-data-reader.js';
import { StreamedReply } from './streamed-reply.js';

/** Room for one stream event's JSON framing beyond the reply bound itself. */
const EVENT_FRAMING_CHARS = 64 * 1024;

/**
 * Reads a streamed Chat Completions body to its end: each event's chunk is assembled as it comes
 * (and heard by the listener), `onBytes` is told of every byte. Throwing out of the loop (malformed,
 * too large) destroys the body: the connection is cut and the rest never received. After `[DONE]`
 * the body is drained unread, so the connection can serve the next call.
 */
export async function readStreamedReply(
  body: Readable,
  maxReplyBytes: number,
  listener: ReplyListener | undefined,
  onBytes: () => void,
): Promise<ModelReply> {
  const reader = new SseDataReader(maxReplyBytes + EVENT_FRAMING_CHARS);
  const reply = new StreamedReply(maxReplyBytes, listener);
  let open = true;
  for await (const chunk of body) {
    onBytes();
    if (open) open = takeAll(reply, reader.push(chunk as Buffer));
  }
  if (open) takeAll(reply, reader.end());
  return reply.reply();
}

/** Takes each event's data until `[DONE]`; false once it came. */
function takeAll(reply: StreamedReply, events: string[]): boolean {
  for (const data of events) if (!reply.take(data)) return false;
  return true;
}
