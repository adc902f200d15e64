import { BULLMQ_VERSION, bullmqScript } from './bullmq-script.js';
import { DISPATCH_MARK, fastPathLua, takeStepLua } from './take-step.js';

/**
 * What a worker blocked on its queue offers the adds of that queue (lua/dispatching-add.lua): the
 * inbox it also blocks on, the lock and name its takes carry, and the head of its take's settings
 * (take-activation.ts), to which the add appends the times.
 */
export interface DispatchOffer {
  inbox: string;
  lockDuration: number;
  name: string;
  head: string;
}

/** BullMQ's add of a standard job, its answer going through meshDispatchJob. */
const ADD = bullmqScript('addStandardJob', 9);
const ADD_COMMAND = `${ADD.name}:${BULLMQ_VERSION}`;

let lua: string | undefined;

/** The dispatching add's Lua (lua/dispatching-add.lua around BullMQ's add, its last line cut). */
export function dispatchingAddLua(): string {
  if (lua) return lua;
  const end = ADD.content.lastIndexOf('return jobId');
  if (end < 0 || ADD.content.slice(end + 'return jobId'.length).trim() !== '')
    throw new Error(
      `bullmq ${BULLMQ_VERSION}: ${ADD.name} no longer ends in "return jobId", where the mesh changes it; ` +
        'check packages/shared/src/queue/fast-path/dispatch.ts against this version',
    );
  lua = fastPathLua.text('dispatching-add', { TAKE: takeStepLua(), ADD: ADD.content.slice(0, end) });
  return lua;
}

type Step = (args: unknown[]) => Promise<unknown>;

/**
 * Makes BullMQ's adds of standard jobs on `client` (a gateway's connection, before any Queue on it
 * defines BullMQ's own) dispatch each job to a worker blocked on its queue, when one is. Only on one
 * Redis server: on a cluster the invocation's keys and the queue's are in different slots, and
 * BullMQ's add stands.
 */
export function defineDispatchingAdd(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  client.defineCommand(ADD_COMMAND, { numberOfKeys: ADD.keys, lua: dispatchingAddLua() });
  const host = client as unknown as Record<string, Step>;
  const send = host[ADD_COMMAND]!;
  let taken = 0;
  const tag = Math.random().toString(36).slice(2, 10);
  host[ADD_COMMAND] = (args) => {
    const now = Date.now();
    const mark = { now: String(now), nowIso: new Date(now).toISOString(), token: `${tag}${taken++}` };
    return send.call(client, [...args, `${DISPATCH_MARK}${JSON.stringify(mark)}`]);
  };
}
