import type { Readable } from 'node:stream';
import type { ModelReply } from '@agentmesh/shared';
import type { ReplyListener } from './chat-model.js';
import { SseDataReader } from './sse-data-reader.js';
import { StreamedReply } from './streamed-reply.js';

/** Room for one stream event's JSON framing beyond the reply bound itself. */
const EVENT_FRAMING_CHARS = 64 * 1024;

/** What the rest of a body may take after its `[DONE]` (bytes, ms) before its connection is cut. */
export const TAIL_LIMITS = { bytes: 64 * 1024, ms: 1000 };

/**
 * Reads a streamed Chat Completions body: each event's chunk is assembled as it comes (and heard
 * by the listener), `onBytes` is told of every byte. The reply is whole at `[DONE]` and answered
 * then, without waiting for the body's end (a provider may send that in a later write: one wake of
 * the runner fewer on every model call); the rest is read and dropped so that the connection can
 * serve the next call (drainTail). A body without `[DONE]` is read to its end. Failing (malformed,
 * too large, the body broken before `[DONE]`) destroys the body: the connection is cut and the rest
 * never received.
 */
export function readStreamedReply(
  body: Readable,
  maxReplyBytes: number,
  listener: ReplyListener | undefined,
  onBytes: () => void,
): Promise<ModelReply> {
  const reader = new SseDataReader(maxReplyBytes + EVENT_FRAMING_CHARS);
  const reply = new StreamedReply(maxReplyBytes, listener);
  return new Promise<ModelReply>((resolve, reject) => {
    // Once settled, what the body says changes nothing (an error then must not go unheard).
    const detach = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', fail);
      body.on('error', () => undefined);
    };
    function fail(e: unknown) {
      detach();
      body.destroy();
      reject(e);
    }
    const answer = () => {
      try {
        resolve(reply.reply());
      } catch (e) {
        reject(e);
      }
    };
    function onData(chunk: Buffer) {
      onBytes();
      try {
        if (takeAll(reply, reader.push(chunk))) return;
      } catch (e) {
        return fail(e);
      }
      detach();
      drainTail(body);
      answer();
    }
    function onEnd() {
      detach();
      try {
        takeAll(reply, reader.end());
      } catch (e) {
        return reject(e);
      }
      answer();
    }
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', fail);
  });
}

/** Takes each event's data until `[DONE]`; false once it came. */
function takeAll(reply: StreamedReply, events: string[]): boolean {
  for (const data of events) if (!reply.take(data)) return false;
  return true;
}

/**
 * Reads what follows `[DONE]` and drops it, so that the body ends and its connection serves the
 * next call; a rest longer or slower than TAIL_LIMITS is cut (the body destroyed, its connection
 * closed). The reply is whole already: nothing of it can fail the call.
 */
function drainTail(body: Readable): void {
  let bytes = 0;
  const cut = () => body.destroy();
  const timer = setTimeout(cut, TAIL_LIMITS.ms);
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > TAIL_LIMITS.bytes) cut();
  });
  body.once('close', () => clearTimeout(timer));
}
