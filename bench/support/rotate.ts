/** `xs` started at position `by` (mod its length): each repetition lets another series go first. */
export function rotate<T>(xs: readonly T[], by: number): T[] {
  const k = by % Math.max(1, xs.length);
  return [...xs.slice(k), ...xs.slice(0, k)];
}
