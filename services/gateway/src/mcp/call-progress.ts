import { RootCallText } from '../events/root-call-text.js';
import type { TreeStream } from '../events/tree-stream.js';

/** Sends one `notifications/progress` with the text so far (its `progress` counted by the caller). */
export type SendProgress = (message: string) => Promise<void>;

/**
 * Follows a tools/call's invocation on its tree's stream with deltas until the stream ends (after
 * the root's terminal status) or is closed, and sends the root's current model call's text so far
 * at each change of it (RootCallText: at most one notification per delta, none while it is empty);
 * docs/guides/streaming.md#mcp. A failed send (the client went away) or a Redis error ends it; it
 * never rejects.
 */
export async function sendProgress(stream: TreeStream, rootId: string, send: SendProgress): Promise<void> {
  const text = new RootCallText(rootId);
  try {
    for await (const { event } of stream) {
      const change = text.take(event);
      if (change && change.text !== '') await send(change.text);
    }
  } catch {
    // The result is read from the invocation all the same.
  } finally {
    stream.close();
  }
}
