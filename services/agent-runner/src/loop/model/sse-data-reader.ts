import { MeshError } from '@agentmesh/shared';

/**
 * Reads a Server-Sent Events body as it arrives and yields each event's `data` (its `data:` lines
 * joined by newlines), per the WHATWG event-stream grammar: lines end with LF, CRLF or CR, `:`
 * starts a comment, other fields (`event`, `id`, `retry`) are not used by chat completions. Each
 * byte is looked at once, and an event (with its unfinished line) larger than `maxEventChars`
 * fails as `invalid_model_reply`, so a body without newlines never grows memory unbounded.
 */
export class SseDataReader {
  private readonly decoder = new TextDecoder('utf-8');
  /** The unfinished line so far. */
  private line = '';
  /** The data lines of the event so far; undefined when it has none. */
  private data: string | undefined;
  /** The last chunk ended in CR: an LF starting the next one ends nothing. */
  private afterCr = false;

  constructor(private readonly maxEventChars: number) {}

  /** The data of every event the bytes complete, in order. */
  push(bytes: Uint8Array): string[] {
    return this.read(this.decoder.decode(bytes, { stream: true }));
  }

  /** At the end of the body: the data of an event it left unterminated too (lenient, as browsers are not). */
  end(): string[] {
    const out = this.read(this.decoder.decode());
    if (this.line !== '') this.take(this.line, out);
    this.line = '';
    if (this.data !== undefined) out.push(this.data);
    this.data = undefined;
    return out;
  }

  private read(text: string): string[] {
    const out: string[] = [];
    let start = 0;
    if (this.afterCr && text.startsWith('\n')) start = 1;
    this.afterCr = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.line === '' ? text.slice(start, i) : this.line + text.slice(start, i);
      this.line = '';
      this.take(line, out);
      if (c === 13) {
        if (i + 1 === text.length) this.afterCr = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    if (start < text.length) this.line += text.slice(start);
    if (this.line.length + (this.data?.length ?? 0) > this.maxEventChars) {
      throw new MeshError(
        'invalid_model_reply',
        `The model reply exceeds ${this.maxEventChars} bytes in one stream event.`,
      );
    }
    return out;
  }

  private take(line: string, out: string[]): void {
    if (line === '') {
      if (this.data !== undefined) out.push(this.data);
      this.data = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // `:` a comment (a keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    if (this.data.length > this.maxEventChars) {
      throw new MeshError(
        'invalid_model_reply',
        `The model reply exceeds ${this.maxEventChars} bytes in one stream event.`,
      );
    }
  }
}
