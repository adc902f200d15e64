/**
 * A counting semaphore: RUNNER_CONCURRENCY slots shared by the workers of every hosted agent.
 * `onShort` hears when they run short (the last one is taken: a worker of one agent stops fetching
 * at its concurrency, the runner's slot count, before any activation would wait) and when they have
 * room again (none waits, and an eighth of them, one at least, are free).
 */
export class Slots {
  private used = 0;
  private readonly waiters: (() => void)[] = [];
  private short = false;

  constructor(
    private readonly size: number,
    private readonly onShort?: (short: boolean) => void,
  ) {}

  /** Resolves once a slot is free, and takes it: true when it had to wait for one. */
  async acquire(): Promise<boolean> {
    if (this.used < this.size) {
      this.used++;
      if (this.used === this.size) this.shortNow(true);
      return false;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
    return true;
  }

  /** Frees a slot, handing it straight to the longest waiter. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used--;
    if (this.waiters.length === 0 && this.size - this.used >= Math.max(1, Math.floor(this.size / 8)))
      this.shortNow(false);
  }

  get inUse(): number {
    return this.used;
  }

  /** Slots free now (none while any activation waits for one). */
  get free(): number {
    return this.waiters.length > 0 ? 0 : this.size - this.used;
  }

  private shortNow(short: boolean): void {
    if (short === this.short) return;
    this.short = short;
    this.onShort?.(short);
  }
}
