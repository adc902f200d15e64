import { DELTA_FLUSH_BYTES, type DeltaData, type EventSource, type ToolCallDelta } from '@agentmesh/shared';
import type { ReplyDelta, ReplyListener } from '../model/chat-model.js';
import type { WatchCheck } from './watch-check.js';

/** What a call's deltas need of the runner's outlet (DeltaOutlet): the watch, the flush delay, the write. */
export interface DeltaSink {
  readonly watch: WatchCheck;
  readonly settings: { flushMs: number };
  publish(who: EventSource & { rootId: string }, data: unknown, expire: boolean): Promise<void>;
}

/** How often, at most, a call's writes renew its tree's delta stream's TTL (its last write always does). */
const EXPIRE_EVERY_MS = 1000;

/**
 * The deltas of one model call (docs/guides/streaming.md): the first piece of the call (or of a
 * retried attempt) goes out at once, as its own delta, so a watcher sees the reply begin without
 * waiting; later pieces are coalesced and go out as one delta `flushMs` after the first unsent one,
 * at once past DELTA_FLUSH_BYTES, and at `end()`. `seq` counts the call's deltas from 0; a
 * re-issued call (`reset`) or a retried attempt (`restart`) starts again at 0 with `reset: true`.
 * A delta's text is taken when it is flushed and written after the ones taken before it, so the
 * stream holds them in `seq` order; nothing is written while the tree is unwatched.
 */
export class CallDeltas implements ReplyListener {
  private content = '';
  private calls: ToolCallDelta[] = [];
  private bytes = 0;
  private seq = 0;
  /** The next piece opens the call (or an attempt): it is flushed at once, not coalesced. */
  private opening = true;
  /** Counts restarts and discards: a delta taken before one is not written. */
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** A write of this call is in flight: the next one waits for it (the stream holds them in `seq` order). */
  private writing = false;
  private expiredAt = 0;
  private closed = false;

  constructor(
    private readonly outlet: DeltaSink,
    private readonly who: EventSource & { rootId: string },
    private readonly callId: string,
    private reset: boolean,
  ) {
    // Asked now, while the model thinks: the call's first flush (or its end) need not wait for it.
    void outlet.watch.watched(who.rootId);
  }

  delta(d: ReplyDelta): void {
    // Unwatched (and known to be): dropped at once, no timer, no write.
    if (this.closed || this.outlet.watch.known(this.who.rootId) === false) return;
    if (d.content) {
      this.content += d.content;
      this.bytes += d.content.length;
    }
    for (const c of d.toolCalls ?? []) this.addCall(c);
    if (this.content === '' && this.calls.length === 0) return;
    if (this.opening || this.bytes >= DELTA_FLUSH_BYTES) this.flush(false);
    else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flush(false);
      }, this.outlet.settings.flushMs);
    }
  }

  restart(): void {
    this.drop();
    this.seq = 0;
    this.reset = true;
  }

  /** The call answered: its unsent text goes out; resolves once every delta of it is written. */
  async end(): Promise<void> {
    if (this.closed) return;
    this.flush(true);
    this.closed = true;
    await this.chain;
  }

  /** The call failed: what was not sent never will be. */
  discard(): void {
    this.drop();
    this.closed = true;
  }

  private addCall(c: ToolCallDelta): void {
    const last = this.calls.at(-1);
    if (last && last.index === c.index && (c.id === undefined || last.id === undefined || last.id === c.id)) {
      if (c.id !== undefined) last.id = c.id;
      if (c.name !== undefined) last.name = c.name;
      if (c.arguments !== undefined) last.arguments = (last.arguments ?? '') + c.arguments;
    } else {
      this.calls.push({ ...c });
    }
    this.bytes += (c.arguments?.length ?? 0) + (c.name?.length ?? 0) + (c.id?.length ?? 0);
  }

  private drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.content = '';
    this.calls = [];
    this.bytes = 0;
    this.opening = true;
    this.attempt++;
  }

  /** Takes the unsent text as one delta, written after those taken before it; `last` at the end. */
  private flush(last: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.content === '' && this.calls.length === 0) return;
    const data: DeltaData = { callId: this.callId, seq: 0 };
    if (this.content !== '') data.content = this.content;
    if (this.calls.length > 0) data.toolCalls = this.calls;
    this.content = '';
    this.calls = [];
    this.bytes = 0;
    this.opening = false;
    const attempt = this.attempt;
    const write = () => this.write(data, attempt, last);
    // With none in flight it is written now, not after the rest of what the model sent with it is
    // parsed (a reply that came in one piece: its first delta goes out before its hundredth is read).
    const chain = this.writing ? this.chain.then(write) : write();
    this.chain = chain;
    this.writing = true;
    void chain.then(() => {
      if (this.chain === chain) this.writing = false;
    });
  }

  /** Writes one delta once the tree is known to be watched: at once when that is known already. */
  private write(data: DeltaData, attempt: number, last: boolean): Promise<void> {
    const known = this.outlet.watch.known(this.who.rootId);
    if (known !== undefined) return this.send(known, data, attempt, last);
    return this.outlet.watch
      .watched(this.who.rootId)
      .then((watched) => this.send(watched, data, attempt, last));
  }

  private async send(watched: boolean, data: DeltaData, attempt: number, last: boolean): Promise<void> {
    // A restart or discard since it was taken voids it.
    if (!watched || attempt !== this.attempt) return;
    data.seq = this.seq++;
    if (this.reset) {
      data.reset = true;
      this.reset = false;
    }
    const now = Date.now();
    // The call's last write always renews the TTL: it runs from the tree's last delta.
    const expire = last || now - this.expiredAt >= EXPIRE_EVERY_MS;
    if (expire) this.expiredAt = now;
    await this.outlet.publish(this.who, data, expire);
  }
}
