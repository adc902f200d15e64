type Stop = () => Promise<void> | void;

const stops: Stop[] = [];
const pids = new Set<number>();
let stopping: Promise<void> | undefined;

/**
 * Everything the bench started, stopped once: on normal end, on failure and on Ctrl-C. Tracked
 * pids are also SIGKILLed synchronously on `exit`, the last chance when a stop hook never ran.
 */
export const stopOnExit = {
  /** Runs `stop` at the end (in reverse order of registration). */
  add(stop: Stop): void {
    stops.push(stop);
  },
  /** A child process to SIGKILL on exit if it is still tracked then. */
  track(pid: number): void {
    pids.add(pid);
  },
  untrack(pid: number): void {
    pids.delete(pid);
  },
  /**
   * Runs every stop hook registered so far, once; a call while they run waits for them, a call after
   * runs those registered since (a test file that starts a mesh per test).
   */
  run(): Promise<void> {
    stopping ??= (async () => {
      for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
      killTracked();
    })().finally(() => {
      stopping = undefined;
    });
    return stopping;
  },
};

function killTracked(): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  pids.clear();
}

process.on('exit', killTracked);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping everything it started\n`);
    void stopOnExit.run().finally(() => process.exit(130));
  });
}
