import { bullKeys } from '@agentmesh/shared';
import { FINISH, FINISH_FUNCTION, IS_TERMINAL } from '@agentmesh/shared/redis';
import type { JobFinishes, ParentTake } from '../../loop/fast-path-ports.js';
import { FencedOutError } from '../../loop/store/activation.js';

const MARK = 'agentmesh:finish:1';
/** After FINISH's arguments: the parent the completion moves on is taken by this runner right behind. */
const PARENT_TAKE = 'agentmesh:parenttake:1';
/** FINISH did not write: the invocation had ended already. */
const ENDED = -9003;
/** FINISH did not write: another activation holds the invocation. */
const FENCED = -9002;
/** How many of FINISH's arguments are keys (a fixed count, as FINISH is defined). */
const FINISH_KEYS = FINISH.numberOfKeys!;

/**
 * Lua put ahead of BullMQ's step that completes a job (fetch-scripts.ts): when the step's arguments
 * hold the mark, FINISH's keys and arguments follow it (the count of arguments first) and FINISH
 * runs before the job is completed. When FINISH does not write, the step ends there, the job
 * untouched, answering why; the runner then completes the job with BullMQ's step alone, as it
 * would have after a FINISH of its own. BullMQ reads its arguments 1–9 only.
 *
 * With the parent-take mark and the parent's job id after FINISH's arguments, a parent the completion
 * moves to its wait list (BullMQ's moveParentToWait, changed in fetch-scripts.ts) gets no marker
 * when it is the only job waiting there: the runner takes it in the step right behind (trailing-takes.ts),
 * so no worker wakes for it. (Were that take never to run, the parent waits for a worker's next
 * fetch, at most its block's timeout away.)
 */
export const FINISH_PRELUDE = `${FINISH_FUNCTION}${IS_TERMINAL}
local meshTakenParentId
-- queueKey is BullMQ's parentQueueKey, without the trailing ':' of toKey('').
local function meshParentTaken(queueKey, parentId)
  return meshTakenParentId == parentId and redis.call('LLEN', queueKey .. '${bullKeys.queue(':', 'wait')}') == 0
    and redis.call('ZCARD', queueKey .. '${bullKeys.queue(':', 'prioritized')}') == 0
end
local function meshFinishFirst()
  local at
  for i = 10, #ARGV do
    if ARGV[i] == '${MARK}' then at = i; break end
  end
  if not at then return nil end
  local n = tonumber(ARGV[at + 1])
  local keys, argv = {}, {}
  for j = 1, ${FINISH_KEYS} do keys[j] = ARGV[at + 1 + j] end
  for j = 1, n do argv[j] = ARGV[at + ${FINISH_KEYS + 1} + j] end
  if ARGV[at + ${FINISH_KEYS + 2} + n] == '${PARENT_TAKE}' then meshTakenParentId = ARGV[at + ${FINISH_KEYS + 3} + n] end
  if meshFinish(keys, argv) ~= 0 then return nil end
  local status = redis.call('HGET', keys[1], 'status')
  if isTerminal(status) then return ${ENDED} end
  return ${FENCED}
end
do
  local refused = meshFinishFirst()
  if refused then return refused end
end
`;

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
      const parentTake = up ? [PARENT_TAKE, up.parentId] : [];
      const sent = send.call(client, [
        ...args,
        MARK,
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
      if (raw !== ENDED && raw !== FENCED) {
        end.resolve(true);
        return raw;
      }
      if (raw === ENDED) end.resolve(false);
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
