import type { Readable } from 'node:stream';

/** A body read up to a byte cap: its text, and whether more was sent than the cap allows. */
export interface CappedBody {
  text: string;
  /** The body is longer than the cap: `text` holds only what was read before it was cut off. */
  over: boolean;
}

/**
 * Reads an HTTP body with a running byte count and stops (closing the stream, so the rest is
 * never received) as soon as it passes `maxBytes`; a `content-length` past it stops it at once.
 * `onBytes` hears of each piece as it arrives (an idle watch).
 */
export async function readCappedBody(
  body: Readable,
  maxBytes: number,
  contentLength?: string | string[] | undefined,
  onBytes?: () => void,
): Promise<CappedBody> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    // undici reports a body destroyed unread as an error: nobody is left to care.
    body.on('error', () => undefined).destroy();
    return { text: '', over: true };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    onBytes?.();
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    // Leaving the loop destroys the stream: the rest of the body is never received.
    if (size > maxBytes) {
      return { text: Buffer.concat(chunks).toString('utf8'), over: true };
    }
    chunks.push(buf);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), over: false };
}
