import type { MeshEvent } from '@agentmesh/shared';

/** How one event changed the text of the root's current model call. */
export interface CallTextChange {
  /** The call's whole text so far. */
  text: string;
  /** What the event added at its end ('' when it restarted). */
  added: string;
  /** The text starts over: a new model call, a call re-issued (`reset`), or a recorded text that replaced it. */
  restarted: boolean;
}

/**
 * The text of the root's current model call, as it is written (the protocols' streams of the root's
 * answer, docs/guides/streaming.md#a2a and #mcp): from the tree's delta events and its `model_call`
 * events, which carry a call's whole text. A new call, or a delta with `reset: true`, starts the text
 * over; a gap in `seq` (or `gap: true`) stops taking that call's deltas until its `model_call` event
 * brings the whole text. Events of other nodes change nothing.
 */
export class RootCallText {
  private callId: string | undefined;
  private text = '';
  private seq = 0;
  private broken = false;
  /** Its `model_call` event came: the text is whole, later deltas of it are stale. */
  private done = false;

  constructor(private readonly rootId: string) {}

  /** The current call's text so far. */
  get current(): string {
    return this.text;
  }

  /** What `event` changed, or undefined when it changed nothing. */
  take(event: Pick<MeshEvent, 'invocationId' | 'data'> & { type: string }): CallTextChange | undefined {
    if (event.invocationId !== this.rootId) return undefined;
    const data = event.data as Record<string, unknown> | null;
    if (typeof data !== 'object' || data === null || typeof data.callId !== 'string') return undefined;
    if (event.type === 'delta') return this.delta(data.callId, data);
    if (event.type === 'model_call') return this.recorded(data.callId, data.content);
    return undefined;
  }

  private delta(callId: string, data: Record<string, unknown>): CallTextChange | undefined {
    if (callId === this.callId && this.done) return undefined;
    const had = this.text;
    const restarted = callId !== this.callId || data.reset === true;
    if (restarted) this.restart(callId, '');
    if (data.seq !== this.seq || data.gap === true) this.broken = true;
    this.seq = typeof data.seq === 'number' ? data.seq + 1 : this.seq + 1;
    const content = typeof data.content === 'string' && !this.broken ? data.content : '';
    this.text += content;
    if (restarted) return this.text !== '' || had !== '' ? this.change('', true) : undefined;
    return content === '' ? undefined : this.change(content, false);
  }

  private recorded(callId: string, content: unknown): CallTextChange | undefined {
    const whole = typeof content === 'string' ? content : '';
    if (callId === this.callId && this.done) return undefined;
    if (callId === this.callId && whole.startsWith(this.text)) {
      this.done = true;
      const added = whole.slice(this.text.length);
      this.text = whole;
      return added === '' ? undefined : this.change(added, false);
    }
    const had = this.text;
    this.restart(callId, whole);
    this.done = true;
    return whole !== '' || had !== '' ? this.change('', true) : undefined;
  }

  private restart(callId: string, text: string): void {
    this.callId = callId;
    this.text = text;
    this.seq = 0;
    this.broken = false;
    this.done = false;
  }

  private change(added: string, restarted: boolean): CallTextChange {
    return { text: this.text, added, restarted };
  }
}
