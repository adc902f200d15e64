import type { BenchContext } from '../support/bench-context.js';
import type { Figure } from '../support/figure.js';
import { throughputFigures } from './throughput.js';

/** Model latency of the realistic load: a fast hosted model's short reply. */
export const REALISTIC_LATENCY_MS = 300;
/** Callers at once in the realistic load. */
export const REALISTIC_CLIENTS = 200;

/**
 * The realistic load of docs/performance.md: parent + 1 delegation at 300 ms per model call, 200 concurrent
 * clients, the shipped defaults: runs/s (≥ 1.0 × the SDK, aiming at 1.25 ×: the SDK is bound to
 * one core, the mesh is not), CPU per run both ways and p99 latency, for each client.
 */
export function realisticFigures(ctx: BenchContext): Promise<Figure[]> {
  return throughputFigures(ctx, REALISTIC_LATENCY_MS, REALISTIC_CLIENTS, {
    minRatio: 1,
    target: '≥ 1.0 × SDK (aim: 1.25 ×)',
  });
}
