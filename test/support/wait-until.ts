/** Polls `check` until it returns a truthy value (returned) or `ms` pass (then fails with `what`). */
export async function waitUntil<T>(
  check: () => Promise<T>,
  ms: number,
  what: () => string,
): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
