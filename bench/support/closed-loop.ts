/** What a closed-loop load produced: runs finished, over how long, their latencies and the CPU they cost. */
export interface LoadResult {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  /** Wall time of each run, in ms. */
  latenciesMs: number[];
  /** CPU ms per run, by the name of each counter given, as it counted over the window. */
  cpuMsPerRun: Record<string, number>;
}

/**
 * `clients` loops, each starting `fn` again as soon as its last run ended, for `seconds`. The
 * window runs from the first start to the last end; each of `cpu`'s counters (CPU ms used so far
 * by some processes) is read at both ends of it.
 */
export async function closedLoop(
  fn: () => Promise<unknown>,
  clients: number,
  seconds: number,
  cpu: Record<string, () => number> = {},
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  const read = () => Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, ms()]));
  const cpu0 = read();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const start = performance.now();
        await fn();
        latenciesMs.push(performance.now() - start);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = read();
  const runs = latenciesMs.length;
  const cpuMsPerRun = Object.fromEntries(
    Object.keys(cpu).map((name) => [name, (cpu1[name]! - cpu0[name]!) / Math.max(1, runs)]),
  );
  return { runs, seconds: elapsed, runsPerSecond: runs / elapsed, latenciesMs, cpuMsPerRun };
}
