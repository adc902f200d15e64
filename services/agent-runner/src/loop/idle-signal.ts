/** A signal that aborts with `signal`, or once nothing happened for `ms`; `touch()` says something did. */
export interface IdleSignal {
  signal: AbortSignal;
  /** Restarts the idle clock (a byte arrived). */
  touch(): void;
  /** Whether it aborted because the clock ran out. */
  readonly idled: boolean;
  clear(): void;
}

/**
 * An idle watch over a request (`MESH_MODEL_IDLE_SECONDS`, docs/reference/bounds.md): one timer,
 * refreshed on each touch (Timeout#refresh re-arms it without allocating), cleared at the end.
 * Without `ms`, no clock: only `signal` aborts it.
 */
export function idleSignal(signal: AbortSignal, ms: number | undefined): IdleSignal {
  if (ms === undefined) return { signal, touch() {}, idled: false, clear() {} };
  const controller = new AbortController();
  let idled = false;
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { signal: controller.signal, touch() {}, idled, clear() {} };
  }
  const onAbort = () => controller.abort(signal.reason);
  const timer = setTimeout(() => {
    idled = true;
    controller.abort(new DOMException(`Nothing arrived for ${ms} ms`, 'TimeoutError'));
  }, ms);
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    touch: () => void timer.refresh(),
    get idled() {
      return idled;
    },
    clear() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}
