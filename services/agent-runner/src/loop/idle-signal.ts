/** A signal that aborts with `signal`, after `timeoutMs`, or once nothing happened for `idleMs`. */
export interface IdleSignal {
  signal: AbortSignal;
  /** Restarts the idle clock (a byte arrived). */
  touch(): void;
  /** Whether it aborted because the idle clock ran out. */
  readonly idled: boolean;
  clear(): void;
}

/**
 * One model request's bounds (docs/reference/bounds.md): its whole time (`timeoutMs`, aborting with a
 * `TimeoutError` as AbortSignal.timeout does) and, with `idleMs`, how long it may receive nothing
 * (`MESH_MODEL_IDLE_SECONDS`). One controller and one timer for both, what a request asks on the hot
 * path: a touch only notes the time, and the timer, when it fires early for either bound, is set
 * again for the nearer one. `clear()` ends the timer and the link to `signal`, and a caller's abort
 * ends the timer (timeout-signal.ts says why neither may outlive the call).
 */
export function idleSignal(signal: AbortSignal, timeoutMs: number, idleMs: number | undefined): IdleSignal {
  const controller = new AbortController();
  let idled = false;
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { signal: controller.signal, touch() {}, idled, clear() {} };
  }
  const start = performance.now();
  let last = start;
  const abort = (reason: unknown) => {
    signal.removeEventListener('abort', onAbort);
    controller.abort(reason);
  };
  const fire = () => {
    const now = performance.now();
    if (now - start >= timeoutMs)
      abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    else if (idleMs !== undefined && now - last >= idleMs) {
      idled = true;
      abort(new DOMException(`Nothing arrived for ${idleMs} ms`, 'TimeoutError'));
    } else timer = setTimeout(fire, nextIn(now));
  };
  const nextIn = (now: number) =>
    Math.max(1, Math.min(start + timeoutMs, idleMs === undefined ? Infinity : last + idleMs) - now);
  let timer = setTimeout(fire, nextIn(start));
  const onAbort = () => {
    clearTimeout(timer);
    controller.abort(signal.reason);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    touch: () => {
      last = performance.now();
    },
    get idled() {
      return idled;
    },
    clear() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}
