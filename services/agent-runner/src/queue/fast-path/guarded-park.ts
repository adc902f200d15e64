import type { Job } from 'bullmq';
import { type Activation, FencedOutError } from '../../loop/store/activation-store.js';
import { bullmqScript } from './bullmq-script.js';
import { GUARD_FENCED, runnerLua } from './runner-lua.js';

const PARK = bullmqScript('moveToWaitingChildren', 7);

const COMMAND = 'mesh_parkJob';

/**
 * BullMQ's own step that moves a job to wait for its children (its installed text), behind the
 * guard of the parent's epoch (lua/guarded-park.lua) — ARGV[6] names the parent's invocation hash, ARGV[7] the epoch
 * (BullMQ reads ARGV 1–5 only). Queued last in the write that submits a delegation's children and
 * marks the parent `waiting`, the job parks in that round trip instead of the next: the parent's
 * worker slot is free once the write is answered, which a child waiting for a slot (a runner of
 * few slots, a chain of delegations on one) otherwise waits one more round trip for.
 */
export const GUARDED_PARK = {
  numberOfKeys: PARK.keys,
  lua: runnerLua.text('guarded-park', { PARK: PARK.content }),
};

/** Registers the guarded park on the connection the runner's store pipelines go through. */
export function defineGuardedPark(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  client.defineCommand(COMMAND, GUARDED_PARK);
}

/** The part of a BullMQ 6 job's backend the park goes through (private in its types). */
interface ParkingBackend {
  moveToWaitingChildrenArgs(jobId: string, token: string, opts: object): unknown[];
  finishedErrors(e: { code: number; jobId: string; command: string; state: string }): Error;
}

type Reply = (err: Error | null, value: unknown) => void;

/**
 * Queues on `pipeline` (of a connection defineGuardedPark registered on) the park of `job`, held
 * with `token`, while `activation` holds the parent (its invocation hash `parentInv`). Resolves as
 * BullMQ's Job.moveToWaitingChildren does: true when the job waits for its children, false when
 * none is pending; rejects with FencedOutError when another activation holds the parent, and with
 * BullMQ's own error when the job is not this worker's to move (its lock lost).
 */
export function queueParkJob(
  pipeline: object,
  job: Job,
  token: string,
  activation: Activation,
  parentInv: string,
): Promise<boolean> {
  const send = (pipeline as Record<string, (args: unknown[], reply: Reply) => unknown>)[COMMAND];
  if (typeof send !== 'function') throw new Error(`${COMMAND} is not defined on the store's connection`);
  const backend = (job as unknown as { backend: ParkingBackend }).backend;
  const jobId = job.id!;
  const args = backend.moveToWaitingChildrenArgs(jobId, token, {});
  const parked = new Promise<boolean>((resolve, reject) =>
    send.call(pipeline, [...args, parentInv, String(activation.epoch)], (err, value) => {
      if (err) reject(err);
      else if (value === GUARD_FENCED) reject(new FencedOutError(activation.state.id));
      else if (value === 0 || value === 1) resolve(value === 0);
      else
        reject(
          backend.finishedErrors({
            code: Number(value),
            jobId,
            command: 'moveToWaitingChildren',
            state: 'active',
          }),
        );
    }),
  );
  parked.catch(() => undefined); // awaited once the submission answered, unless it failed before
  return parked;
}
