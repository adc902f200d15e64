/** Sequential samples in one block: each series is sampled in blocks this long, the series taking turns. */
const BLOCK = 20;
/**
 * A pause before each block: what the last run of another series left to do after it answered
 * (the mesh completes its job after the response) is done before this series' clock starts, so
 * no block pays for another's tail.
 */
const SETTLE_MS = 20;

/** A sample: one run, returning what it measured (ms). */
export type Sample = () => Promise<number>;

/** A sample that is `fn`'s wall time. */
export const wallTime =
  (fn: () => Promise<unknown>): Sample =>
  async () => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };

/**
 * `runs` sequential samples of each series, taken in blocks of 20 with the series taking turns, so
 * a change of the machine's speed (this VM's load moves the SDK's own times by 2 × within an hour)
 * reaches every series alike, and their ratio stays steady where their times do not.
 */
export async function inTurns<K>(series: ReadonlyMap<K, Sample>, runs: number): Promise<Map<K, number[]>> {
  const samples = new Map([...series.keys()].map((k) => [k, [] as number[]]));
  for (let done = 0; done < runs; done += BLOCK) {
    const n = Math.min(BLOCK, runs - done);
    for (const [k, sample] of series) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      for (let i = 0; i < n; i++) samples.get(k)!.push(await sample());
    }
  }
  return samples;
}
