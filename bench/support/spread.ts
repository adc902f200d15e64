/** A distribution summed up: median with the 10th and 90th percentiles. */
export interface Spread {
  p10: number;
  p50: number;
  p90: number;
}

/** p10, p50 and p90 of `xs` (linear interpolation between the nearest ranks), rounded to 0.01. */
export function spread(xs: number[]): Spread {
  if (xs.length === 0) throw new Error('spread of no values');
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => {
    const pos = q * (sorted.length - 1);
    const lo = Math.floor(pos);
    const hi = Math.min(sorted.length - 1, lo + 1);
    return round(sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo));
  };
  return { p10: at(0.1), p50: at(0.5), p90: at(0.9) };
}

/** Rounds to two decimals, the precision every figure is printed with. */
export function round(x: number): number {
  return Math.round(x * 100) / 100;
}
