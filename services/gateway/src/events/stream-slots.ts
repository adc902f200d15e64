import { MeshError } from '@agentmesh/shared';

/**
 * Counts open event streams against two bounds (docs/reference/bounds.md): `perCaller` per API key (callers
 * without a key count as one) and `total` per gateway. Past either, 429 `too_many_streams`.
 */
export class StreamSlots {
  private open = 0;
  private readonly byCaller = new Map<string, number>();

  constructor(
    private readonly perCaller: number,
    private readonly total: number,
  ) {}

  /** Takes a slot for `caller` (the owner hash, or undefined) or throws; returns its release. */
  acquire(caller: string | undefined): () => void {
    const who = caller ?? '';
    const mine = this.byCaller.get(who) ?? 0;
    if (mine >= this.perCaller)
      throw new MeshError(
        'too_many_streams',
        `Too many open event streams for this caller (at most ${this.perCaller}); close one and retry.`,
      );
    if (this.open >= this.total)
      throw new MeshError(
        'too_many_streams',
        `Too many open event streams on this gateway (at most ${this.total}); retry later.`,
      );
    this.open++;
    this.byCaller.set(who, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.byCaller.get(who) ?? 1) - 1;
      if (left === 0) this.byCaller.delete(who);
      else this.byCaller.set(who, left);
    };
  }
}
