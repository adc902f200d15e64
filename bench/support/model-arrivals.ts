/** A request as the fake model saw it arrive: its agent, its turn, when (monotonicMs), how it asked. */
export interface Arrival {
  agent: string;
  turn: number;
  at: number;
  /** It asked for a streamed reply. */
  stream: boolean;
  /** Once answered: ms from its arrival to its reply's last piece written (the model's own time). */
  sentMs?: number;
}

/**
 * The system's monotonic clock in ms (`process.hrtime`, CLOCK_MONOTONIC on Linux): one clock for
 * every process of the machine, so the bench and the fake model can time one run between them.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
