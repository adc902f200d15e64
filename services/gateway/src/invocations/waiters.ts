import type { MeshRedis } from '@agentmesh/shared';

/**
 * Wakes HTTP requests waiting for an invocation to finish. One subscriber connection per gateway
 * listens on the done channel; a waiter registers before its job is enqueued, so a fast finish
 * cannot slip past it.
 */
export class Waiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private closing = false;

  constructor(
    private readonly subscriber: MeshRedis,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    this.subscriber.on('message', (_channel: string, id: string) => {
      const set = this.waiting.get(id);
      if (!set) return;
      this.waiting.delete(id);
      for (const wake of set) wake();
    });
    await this.subscriber.subscribe(this.channel);
  }

  /**
   * Ends every wait now and every later one at once: a gateway shutting down answers its open
   * requests with the invocation as it stands (202 + Location) instead of holding them.
   */
  releaseAll(): void {
    this.closing = true;
    for (const set of this.waiting.values()) for (const wake of set) wake();
    this.waiting.clear();
  }

  /** Registers interest in `id`; `wait(ms)` resolves true when it finished, false on timeout. */
  register(id: string): { wait(ms: number, signal?: AbortSignal): Promise<boolean>; cancel(): void } {
    let wake!: () => void;
    const done = new Promise<void>((r) => (wake = r));
    if (this.closing) wake();
    const set = this.waiting.get(id) ?? new Set();
    this.waiting.set(id, set);
    set.add(wake);
    const cancel = () => {
      const s = this.waiting.get(id);
      s?.delete(wake);
      if (s?.size === 0) this.waiting.delete(id);
    };
    return {
      cancel,
      wait: async (ms, signal) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<boolean>((r) => {
          timer = setTimeout(() => r(false), ms);
          if (signal?.aborted) r(false);
          else signal?.addEventListener('abort', () => r(false), { once: true });
        });
        const finished = await Promise.race([done.then(() => true), timeout]);
        clearTimeout(timer);
        cancel();
        return finished;
      },
    };
  }
}
