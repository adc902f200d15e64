import { abortableSleep } from '../abortable-sleep.js';
import { type RemoteError, toRemoteError } from './remote-error.js';

/**
 * Runs an A2A call, retrying transient failures with backoff (250 ms doubling to 2 s) while the
 * next try would start before `until`; throws the last failure as a RemoteError, or the signal's
 * reason once it aborts.
 */
export async function retryRemote<T>(call: () => Promise<T>, until: number, signal: AbortSignal): Promise<T> {
  let delay = 250;
  for (;;) {
    let failure: RemoteError;
    try {
      return await call();
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      failure = toRemoteError(e);
    }
    if (!failure.transient || Date.now() + delay >= until) throw failure;
    await abortableSleep(delay, signal);
    delay = Math.min(delay * 2, 2000);
  }
}
