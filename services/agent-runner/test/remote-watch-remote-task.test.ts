// watchRemoteTask ends its subscription when its window closes, even when the stream is silent and
// garbage is collected meanwhile: an AbortSignal.timeout nobody held could be collected before it
// fired, and a parked remote child then watched a silent task for as long as the task ran.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Task, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import t from 'tap';
import { watchRemoteTask } from '../src/remote/watch-remote-task.js';

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
