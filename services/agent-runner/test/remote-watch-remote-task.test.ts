// watchRemoteTask ends its subscription when its window closes, even when the stream is silent and
// garbage is collected meanwhile: an AbortSignal.timeout nobody held could be collected before it
// fired, and a parked remote child then watched a silent task for as long as the task ran. And a
// subscription that ends before the task settles (A2A ends one at input-required) is followed by
// a pause: a remote task waiting on an approval made the watcher subscribe again in a busy loop.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Task, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import t from 'tap';
import { watchRemoteTask } from '../src/loop/remote/watch-remote-task.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const working = { id: 'task-1', status: { state: TaskState.TASK_STATE_WORKING } } as unknown as Task;

/** A remote that reports the task working, then says nothing until the caller aborts. */
const silentRemote = {
  getTask: async () => working,
  async *resubscribeTask(_req: unknown, opts: { signal: AbortSignal }) {
    yield { payload: { $case: 'task', value: working } };
    await new Promise((_, reject) =>
      opts.signal.addEventListener('abort', () => reject(opts.signal.reason), { once: true }),
    );
  },
} as unknown as Client;

t.test('a silent subscription ends with its window, whatever the collector does', async (t) => {
  const collecting = setInterval(gc, 5);
  t.teardown(() => clearInterval(collecting));
  const task = await Promise.race([
    watchRemoteTask(silentRemote, 'task-1', Date.now() + 200, new AbortController().signal),
    new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000).unref()),
  ]);
  t.not(task, 'hung', 'the watch returned');
  t.equal((task as Task).status?.state, TaskState.TASK_STATE_WORKING, 'with the latest state');
});

t.test('the caller aborting ends the watch with its reason', async (t) => {
  const caller = new AbortController();
  setTimeout(() => caller.abort(new Error('lock lost')), 50);
  await t.rejects(watchRemoteTask(silentRemote, 'task-1', Date.now() + 60_000, caller.signal), {
    message: 'lock lost',
  });
});

const waitingOnApproval = {
  id: 'task-2',
  status: { state: TaskState.TASK_STATE_INPUT_REQUIRED },
} as unknown as Task;

/** A remote whose task waits on an approval: A2A ends each subscription there at once. */
const interruptedRemote = (subscriptions: { n: number }) =>
  ({
    getTask: async () => waitingOnApproval,
    async *resubscribeTask() {
      subscriptions.n++;
      yield { payload: { $case: 'task', value: waitingOnApproval } };
      yield {
        payload: { $case: 'statusUpdate', value: { taskId: 'task-2', status: waitingOnApproval.status } },
      };
    },
  }) as unknown as Client;

t.test('a stream that ends before the task settles is looked at again after a pause', async (t) => {
  const subscriptions = { n: 0 };
  const task = await watchRemoteTask(
    interruptedRemote(subscriptions),
    'task-2',
    Date.now() + 1000,
    new AbortController().signal,
  );
  t.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the latest state');
  // Pauses of 250 ms, then 500, then the rest of the window: three looks (a busy loop made
  // hundreds of thousands). Pauses only make it fewer.
  t.ok(subscriptions.n <= 5, `subscribed ${subscriptions.n} times`);
  t.ok(subscriptions.n >= 1, 'it subscribed');
});
