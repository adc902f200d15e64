import { round, type Spread } from './spread.js';

/** One line of the bench's output (docs/performance.md): the mesh's figure, the SDK's, and the target. */
export interface Figure {
  figure: string;
  unit: string;
  mesh: Spread;
  sdk?: Spread;
  /** mesh p50 / sdk p50, or the figure's own ratio (e.g. to ideal). */
  ratio?: number;
  /** The docs/performance.md target, in words. */
  target?: string;
  ok?: boolean;
  /** Anything else the figure reports (model latency, clients, runners, before/after…). */
  [extra: string]: unknown;
}

/** Builds a figure; with an SDK side the ratio is mesh p50 / SDK p50 and `ok` is `ratio ≤ maxRatio`. */
export function figure(
  name: string,
  unit: string,
  mesh: Spread,
  opts: {
    sdk?: Spread;
    maxRatio?: number;
    /** Bigger is better (throughput): ok when ratio ≥ minRatio. */
    minRatio?: number;
    target?: string;
    ok?: boolean;
    extra?: Record<string, unknown>;
  } = {},
): Figure {
  const out: Figure = { figure: name, unit, mesh };
  if (opts.sdk) {
    out.sdk = opts.sdk;
    out.ratio = round(mesh.p50 / opts.sdk.p50);
  }
  if (opts.target) out.target = opts.target;
  if (opts.ok !== undefined) out.ok = opts.ok;
  else if (opts.maxRatio !== undefined && out.ratio !== undefined) out.ok = out.ratio <= opts.maxRatio;
  else if (opts.minRatio !== undefined && out.ratio !== undefined) out.ok = out.ratio >= opts.minRatio;
  return Object.assign(out, opts.extra);
}
