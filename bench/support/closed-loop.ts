/** What a closed-loop load produced: runs finished, over how long, and the CPU it cost. */
export interface LoadResult {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  /** CPU ms per run, as `cpuMs()` counted it over the window. */
  cpuMsPerRun: number;
}

/**
 * `clients` loops, each starting `fn` again as soon as its last run ended, for `seconds`. The
 * window runs from the first start to the last end; `cpuMs` is read at both ends of it.
 */
export async function closedLoop(
  fn: () => Promise<unknown>,
  clients: number,
  seconds: number,
  cpuMs: () => number,
): Promise<LoadResult> {
  let runs = 0;
  const cpu0 = cpuMs();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        await fn();
        runs++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuMs() - cpu0;
  return { runs, seconds: elapsed, runsPerSecond: runs / elapsed, cpuMsPerRun: cpu / Math.max(1, runs) };
}
