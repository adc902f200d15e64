import { type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { abortableSleep } from '../abortable-sleep.js';
import { timeoutSignal } from '../timeout-signal.js';

const SETTLED = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** True when a remote task reached a terminal state. */
export const isSettled = (task: Task): boolean =>
  SETTLED.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);

/**
 * Watches a remote task until it settles or `until` passes, then answers its latest state
 * (GetTask, which carries the artifacts). It waits on SubscribeToTask, so an answer is seen as
 * soon as it exists. A stream that ends before the task settles (a server that offers no
 * subscription, a broken connection, or an interrupted task: A2A ends a stream at input-required,
 * a remote approval then may take hours) is followed by a pause, backing off, before the next
 * look: a task that stays there is polled with GetTask, never asked about in a loop.
 * Throws the signal's reason when `signal` aborts (cancellation, lock lost, drain).
 */
export async function watchRemoteTask(
  client: Client,
  taskId: string,
  until: number,
  signal: AbortSignal,
): Promise<Task> {
  const get = () => client.getTask({ tenant: '', id: taskId, historyLength: 0 }, { signal });
  let pollMs = 250;
  for (;;) {
    const task = await get();
    if (isSettled(task) || Date.now() >= until) return task;
    // Not AbortSignal.any([signal, AbortSignal.timeout(…)]): nothing holds that timeout signal,
    // which may be collected before it fires, and then the stream is watched until its next event
    // (a parked child stayed `running` for a minute). Here the timer is ours until clear().
    const window = timeoutSignal(signal, until - Date.now());
    let settled = false;
    try {
      for await (const event of client.resubscribeTask(
        { tenant: '', id: taskId },
        { signal: window.signal },
      )) {
        if (settles(event)) {
          settled = true;
          break;
        }
      }
    } catch {
      if (signal.aborted) throw signal.reason;
    } finally {
      window.clear();
    }
    if (signal.aborted) throw signal.reason;
    if (!settled && !window.signal.aborted) {
      await abortableSleep(Math.min(pollMs, Math.max(0, until - Date.now())), signal);
      pollMs = Math.min(pollMs * 2, 2000);
    }
  }
}

function settles(event: StreamResponse): boolean {
  const p = event.payload;
  if (p?.$case === 'task') return isSettled(p.value);
  if (p?.$case === 'statusUpdate')
    return SETTLED.has(p.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
  return p?.$case === 'message';
}
