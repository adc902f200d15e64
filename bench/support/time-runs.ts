/** Runs `fn` `n` times one after another; the wall time of each run in ms. */
export async function timeRuns(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return ms;
}
