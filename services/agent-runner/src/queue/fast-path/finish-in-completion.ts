import { FINISH } from '@agentmesh/shared/redis';
import type { JobFinishes, ParentTake } from '../../loop/fast-path-ports.js';
import { FencedOutError } from '../../loop/store/activation.js';
import { FINISH_ENDED, FINISH_FENCED, FINISH_MARK, PARENT_TAKE_MARK, runnerLua } from './runner-lua.js';

/** How many of FINISH's arguments are keys (a fixed count, as FINISH is defined). */
const FINISH_KEYS = FINISH.numberOfKeys!;

/**
 * Lua put ahead of BullMQ's step that completes a job (fetch-scripts.ts): FINISH riding in it,
 * when its arguments hold the mark (lua/finish-prelude.lua).
 */
export const FINISH_PRELUDE = runnerLua.text('finish-prelude');

/** A step as ioredis defines it on a connection: the arguments as one list. */
type Step = (args: unknown[]) => Promise<unknown>;

interface Waiting {
  args: (string | number)[];
  parentTake: ParentTake | undefined;
  resolve(written: boolean): void;
  reject(e: Error): void;
}

/**
 * A delegation's end in the step that completes its job. A child's FINISH and BullMQ's completion
 * of its job were two steps, one after the other, on the path from the child's last model reply
 * to its parent's resumption; the second is the one that moves the parent on. Here FINISH's
 * arguments wait for the job's completion (`defer`) and ride in it: one round trip, and the two
 * writes land together. The activation returns at once (the completion follows the processor's
 * return); what it does once the end is written waits for the step's reply.
 */
export class FinishesInCompletion implements JobFinishes {
  private readonly waiting = new Map<string, Waiting>();

  /** Makes `command` (BullMQ's changed completion step, with `keys` keys) on `client` carry the ends. */
  attach(client: object, command: string, keys: number): void {
    const host = client as Record<string, Step>;
    const send = host[command];
    if (typeof send !== 'function') throw new Error(`${command} is not defined on the worker's connection`);
    host[command] = async (args) => {
      const jobId = String(args[keys]);
      const end = this.waiting.get(jobId);
      if (!end) return send.call(client, args);
      this.waiting.delete(jobId);
      // The parent goes to this runner when its worker can take it: the take right behind the step.
      const up = end.parentTake?.takes.canTake() ? end.parentTake : undefined;
      const parentTake = up ? [PARENT_TAKE_MARK, up.parentId] : [];
      const sent = send.call(client, [
        ...args,
        FINISH_MARK,
        FINISH_KEYS,
        end.args.length - FINISH_KEYS,
        ...end.args,
        ...parentTake,
      ]);
      // Right behind it on the same connection (defineFetchScripts defines the take with the step).
      up?.takes.queue(client, up.parentId);
      let raw: unknown;
      try {
        raw = await sent;
      } catch (e) {
        // Not answered (a lost connection): BullMQ retries the step, the end with it.
        if (!this.waiting.has(jobId)) this.waiting.set(jobId, end);
        throw e;
      }
      if (raw !== FINISH_ENDED && raw !== FINISH_FENCED) {
        end.resolve(true);
        return raw;
      }
      if (raw === FINISH_ENDED) end.resolve(false);
      else end.reject(new FencedOutError(jobId));
      return send.call(client, args);
    };
  }

  /**
   * Has FINISH (`args`: its keys, then its arguments) ride in the step that completes job `jobId`;
   * resolves true when it wrote the end, false when the invocation had ended already, and rejects
   * with FencedOutError when another activation holds it. With `parentTake`, the parent the step
   * moves on is taken by that worker in the step right behind (trailing-takes.ts).
   */
  defer(jobId: string, args: (string | number)[], parentTake?: ParentTake): Promise<boolean> {
    return new Promise((resolve, reject) => this.waiting.set(jobId, { args, parentTake, resolve, reject }));
  }
}
