import type { MeshEvent } from '@agentmesh/shared';

/** The text of one attempt of one of the root's model calls, as far as it was sent. */
interface CallText {
  text: string;
  /** The next delta `seq` expected; a gap stops taking deltas (the recorded text completes it). */
  seq: number;
  broken: boolean;
  /** Recorded: its whole text is known and was sent; later deltas are stale. */
  done: boolean;
}

// Between the texts of two model calls (or two attempts of one): a blank line, nothing retracted.
const SEPARATOR = '\n\n';

/**
 * The content a streamed chat completion sends, from the events of the root's tree (delta events
 * as in docs/reference/rest-api.md, and structural ones): the root's model calls' text as it is
 * written. A call's `model_call` event carries its whole text, so what its deltas did not bring
 * (nobody watched yet, or deltas are not published) is sent then; a call re-issued (`reset`), or
 * a later call, starts after a blank line. Events of other nodes add nothing.
 */
export class RootText {
  private readonly calls = new Map<string, CallText>();
  private sentAny = false;

  constructor(private readonly rootId: string) {}

  /** True once some content was sent. */
  get streamed(): boolean {
    return this.sentAny;
  }

  /** The content `event` adds ('' for none). */
  take(event: Pick<MeshEvent, 'invocationId' | 'data'> & { type: string }): string {
    if (event.invocationId !== this.rootId) return '';
    const data = event.data as Record<string, unknown> | null;
    if (typeof data !== 'object' || data === null || typeof data.callId !== 'string') return '';
    if (event.type === 'delta') return this.delta(data.callId, data);
    if (event.type === 'model_call') return this.recorded(data.callId, data.content);
    return '';
  }

  private delta(callId: string, data: Record<string, unknown>): string {
    let call = this.calls.get(callId);
    if (call?.done) return '';
    if (!call || data.reset === true) {
      call = { text: '', seq: 0, broken: false, done: false };
      this.calls.set(callId, call);
    }
    if (data.seq !== call.seq) call.broken = true;
    call.seq = typeof data.seq === 'number' ? data.seq + 1 : call.seq + 1;
    const content = typeof data.content === 'string' ? data.content : '';
    if (call.broken || content === '') return '';
    return this.send(call, content);
  }

  private recorded(callId: string, content: unknown): string {
    const text = typeof content === 'string' ? content : '';
    const call = this.calls.get(callId) ?? { text: '', seq: 0, broken: false, done: false };
    this.calls.set(callId, call);
    if (call.done) return '';
    call.done = true;
    if (text.startsWith(call.text)) return this.send(call, text.slice(call.text.length));
    // What was sent is not where the recorded text begins: that attempt was replaced.
    return this.send({ text: '', seq: 0, broken: false, done: true }, text);
  }

  /** `content` appended to `call`'s text, after a blank line when it opens the call's text. */
  private send(call: CallText, content: string): string {
    if (content === '') return '';
    const opens = call.text === '' && this.sentAny;
    call.text += content;
    this.sentAny = true;
    return opens ? SEPARATOR + content : content;
  }
}
