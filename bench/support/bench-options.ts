/** How big a bench run is: every size comes from the environment, with a fast smoke mode. */
export interface BenchOptions {
  /** `BENCH_QUICK=1`: small sizes, to check that every figure runs and prints. */
  quick: boolean;
  /** Repetitions of each figure (`BENCH_REPS`); spreads are over these or over pooled samples. */
  reps: number;
  /** Sequential runs per repetition of a latency figure (`BENCH_RUNS`). */
  runs: number;
  /** Runs of each side before anything is timed, so every process is JIT-compiled (`BENCH_WARMUP`). */
  warmup: number;
  /** Length of one throughput window in seconds (`BENCH_SECONDS`). */
  seconds: number;
  /** Runner counts of the scaling figure (`BENCH_RUNNERS`, comma list). */
  runnerCounts: number[];
  /** Parents parked at once in the parked-parents figure (`BENCH_PARKED`). */
  parked: number;
  /** SIGKILL trials of the recovery figure (`BENCH_RECOVERIES`). */
  recoveries: number;
  /** Depth of the nested chain (`BENCH_DEPTH`). */
  depth: number;
  /** Only these figure groups (`BENCH_ONLY`, comma list of group names); all when empty. */
  only: string[];
  /**
   * The mesh's queue fast path (`BENCH_QUEUE_FASTPATH=on|off`, default on, its shipped default): the
   * services start with MESH_QUEUE_FASTPATH set so, to compare stock BullMQ side by side.
   */
  queueFastPath: 'on' | 'off';
  /** Write bench/results/<date>-<machine>.json and .md (`BENCH_SAVE`; default on for a full run). */
  save: boolean;
}

/** Reads the bench sizes from `env`; a bad value is an error naming the variable. */
export function benchOptions(env: Record<string, string | undefined>): BenchOptions {
  const quick = env.BENCH_QUICK === '1';
  if (env.BENCH_RUNNER_CONCURRENCY !== undefined)
    throw new Error(
      'BENCH_RUNNER_CONCURRENCY is gone: the bench runs the shipped defaults (docs/performance.md)',
    );
  const int = (name: string, full: number, fast: number, min = 1): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return quick ? fast : full;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
    return n;
  };
  const runnerCounts = (env.BENCH_RUNNERS ?? '1,2,4').split(',').map((s) => Number(s.trim()));
  if (runnerCounts.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_RUNNERS must be a comma list of integers ≥ 1, got "${env.BENCH_RUNNERS}"`);
  const fastPath = env.BENCH_QUEUE_FASTPATH ?? 'on';
  if (fastPath !== 'on' && fastPath !== 'off')
    throw new Error(`BENCH_QUEUE_FASTPATH must be "on" or "off", got "${fastPath}"`);
  return {
    quick,
    queueFastPath: fastPath,
    reps: int('BENCH_REPS', 5, 2),
    runs: int('BENCH_RUNS', 200, 20),
    warmup: int('BENCH_WARMUP', 3000, 60, 0),
    seconds: int('BENCH_SECONDS', 10, 2),
    runnerCounts,
    parked: int('BENCH_PARKED', 10_000, 200),
    recoveries: int('BENCH_RECOVERIES', 5, 1),
    depth: int('BENCH_DEPTH', 20, 20),
    only: (env.BENCH_ONLY ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    save: env.BENCH_SAVE === undefined ? !quick : env.BENCH_SAVE === '1',
  };
}
