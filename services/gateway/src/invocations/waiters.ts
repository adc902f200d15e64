import { APPROVAL_WAKE_PREFIX, type MeshRedis } from '@agentmesh/shared/redis';

interface Waiter {
  wake(message: string | undefined): void;
  /** Woken too when some node of the tree starts waiting on a human decision. */
  approvals: boolean;
}

/**
 * Wakes HTTP requests waiting for an invocation to finish. One subscriber connection per gateway
 * listens on the done channel; a waiter registers before its job is enqueued, so a fast finish
 * cannot slip past it. A waiter registered with `approvals` also wakes when a node of the root's
 * tree parks on an approval (`approval <rootId>` on the same channel, docs/reference/rest-api.md `wait`).
 */
export class Waiters {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private closing = false;

  constructor(
    private readonly subscriber: MeshRedis,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    // `id`, or `id\n<the invocation>` (see FINISH): the rest goes to the waiters as it is.
    this.subscriber.on('message', (_channel: string, message: string) => {
      if (message.startsWith(APPROVAL_WAKE_PREFIX)) {
        const set = this.waiting.get(message.slice(APPROVAL_WAKE_PREFIX.length));
        for (const waiter of set ?? []) if (waiter.approvals) waiter.wake(undefined);
        return;
      }
      const nl = message.indexOf('\n');
      const id = nl < 0 ? message : message.slice(0, nl);
      const set = this.waiting.get(id);
      if (!set) return;
      this.waiting.delete(id);
      for (const waiter of set) waiter.wake(nl < 0 ? undefined : message.slice(nl + 1));
    });
    await this.subscriber.subscribe(this.channel);
  }

  /**
   * Ends every wait now and every later one at once: a gateway shutting down answers its open
   * requests with the invocation as it stands (202 + Location) instead of holding them.
   */
  releaseAll(): void {
    this.closing = true;
    for (const set of this.waiting.values()) for (const waiter of set) waiter.wake(undefined);
    this.waiting.clear();
  }

  /**
   * Registers interest in `id`; `wait(ms)` resolves true when it finished (with `approvals`, also
   * when its tree started waiting on a decision), false on timeout. Once finished, `message` holds
   * what the done message carried besides the id (see FINISH), if any.
   */
  register(
    id: string,
    { approvals = false }: { approvals?: boolean } = {},
  ): {
    wait(ms: number, signal?: AbortSignal): Promise<boolean>;
    cancel(): void;
    readonly message: string | undefined;
  } {
    let message: string | undefined;
    let wake!: (m: string | undefined) => void;
    const done = new Promise<void>((r) => {
      wake = (m) => {
        message = m;
        r();
      };
    });
    if (this.closing) wake(undefined);
    const set = this.waiting.get(id) ?? new Set();
    this.waiting.set(id, set);
    const waiter: Waiter = { wake, approvals };
    set.add(waiter);
    const cancel = () => {
      const s = this.waiting.get(id);
      s?.delete(waiter);
      if (s?.size === 0) this.waiting.delete(id);
    };
    return {
      cancel,
      get message() {
        return message;
      },
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
