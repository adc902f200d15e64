import { idleSignal } from './idle-signal.js';

/** A signal that aborts with `signal` or after `ms`, and the `clear()` that ends both links. */
export interface TimeoutSignal {
  signal: AbortSignal;
  clear(): void;
}

/**
 * What `AbortSignal.any([signal, AbortSignal.timeout(ms)])` does, without what it costs on the hot
 * path: that timer lives (and holds its signal) for the whole timeout, even after the call ended,
 * and `any` keeps both sources linked; one model or tool call each made thousands of them pending
 * under load. Here the timer and the listener go at `clear()`, and either goes as soon as the other
 * fired: a caller's abort does not leave the timer holding the process (a remote request aborted
 * while its body streamed kept a 30 s timer, and a runner's exit waited for it). The timeout's reason
 * is a `TimeoutError` DOMException, like AbortSignal.timeout's.
 */
export function timeoutSignal(signal: AbortSignal, ms: number): TimeoutSignal {
  // The model request's bounds (idle-signal.ts) without the idle clock: one mechanism for both.
  return idleSignal(signal, ms, undefined);
}
