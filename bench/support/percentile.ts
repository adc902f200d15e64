/** The `q` quantile of `xs` by nearest rank (0.99: the value 99 % of the samples do not exceed). */
export function percentile(xs: readonly number[], q: number): number {
  if (xs.length === 0) throw new Error('percentile of no values');
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
