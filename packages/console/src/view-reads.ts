import { api } from './api';
import type { InvocationView } from './types';

/** Node views read at most this many at a time. */
const FETCHES = 6;

/** A node's view, and the number its request was sent under: a request sent later has a higher one. */
export type NumberedView = [view: InvocationView, asked: number];

/**
 * The requests of a tree page that answer with a node's view (docs/guides/console.md): re-reads
 * queued per node and sent at most FETCHES at a time, one per node in flight (a re-read asked for
 * meanwhile follows it), and every request, re-reads and actions alike, numbered as it is sent, so
 * that an answer can be told older than one the node already shows.
 */
export class ViewReads {
  private asked = 0;
  private readonly inflight = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private running = 0;
  private stopped = false;

  /** `take` is handed each re-read of node `id` as it is sent, and settles once it has taken it in. */
  constructor(private readonly take: (id: string, read: Promise<NumberedView>) => Promise<void>) {}

  /** Sends a request answered with a node's view, numbered. */
  async request(path: string, init?: { method: string; body?: unknown }): Promise<NumberedView> {
    const asked = ++this.asked;
    return [await api<InvocationView>(path, init), asked];
  }

  /** Reads node `id`'s view again (after the one in flight, if any); none while stopped. */
  refresh(id: string): void {
    if (this.stopped) return;
    if (this.inflight.has(id)) {
      this.dirty.add(id);
      return;
    }
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.queue.push(id);
    this.pump();
  }

  /** Stops or resumes sending re-reads (the page left the tree, or came back to it). */
  setStopped(stopped: boolean): void {
    this.stopped = stopped;
  }

  private pump(): void {
    while (this.running < FETCHES && this.queue.length > 0) {
      const id = this.queue.shift()!;
      this.queued.delete(id);
      this.running++;
      this.inflight.add(id);
      void this.take(id, this.request(`/invocations/${id}`)).finally(() => {
        this.running--;
        this.inflight.delete(id);
        if (this.dirty.delete(id)) this.refresh(id);
        this.pump();
      });
    }
  }
}
