/** A request as the fake model saw it arrive: its agent, its turn, and when (monotonicMs). */
export interface Arrival {
  agent: string;
  turn: number;
  at: number;
}

/**
 * The system's monotonic clock in ms (`process.hrtime`, CLOCK_MONOTONIC on Linux): one clock for
 * every process of the machine, so the bench and the fake model can time one run between them.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
