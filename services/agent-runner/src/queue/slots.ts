/** A counting semaphore: RUNNER_CONCURRENCY slots shared by the workers of every hosted agent. */
export class Slots {
  private used = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves once a slot is free, and takes it: true when it had to wait for one. */
  async acquire(): Promise<boolean> {
    if (this.used < this.size) {
      this.used++;
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
  }

  get inUse(): number {
    return this.used;
  }

  /** Slots free now (none while any activation waits for one). */
  get free(): number {
    return this.waiters.length > 0 ? 0 : this.size - this.used;
  }
}
