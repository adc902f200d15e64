import { dispatchKeys } from '@agentmesh/shared';
import type { DispatchOffer } from '@agentmesh/shared/queue/fast-path';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { ConnectionClosedError, type Job, raw2NextJobData, type Worker } from 'bullmq';
import { unpack } from 'msgpackr';
import { runnerLua } from './runner-lua.js';
import type { TakenActivations } from './take-activation.js';

/** The blocking client of a BullMQ 6 worker, as its backend uses it (BullMQ's proxy over ioredis). */
interface BlockingClient {
  zrem(key: string, member: string): Promise<number>;
  bzpopmin(...args: (string | number)[]): Promise<unknown>;
  pipeline(): BlockingPipeline;
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}

interface BlockingPipeline {
  meshRegisterBlocked(...args: (string | number)[]): BlockingPipeline;
  bzpopminBuffer(...args: (string | number)[]): BlockingPipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** The parts of a BullMQ 6 worker a dispatched job goes through (private in its types). */
interface DispatchingWorker {
  closing: Promise<void> | null;
  backend: { blockingConnection?: { client: Promise<BlockingClient> } };
  updateDelays(limitDelay?: number, delayUntil?: number): void;
  nextJobFromJobData(jobData?: unknown, jobId?: string, token?: string): Promise<Job | undefined>;
  moveToActive(token: string, name?: string): Promise<Job | undefined>;
}

function asClosed(e: Error): never {
  if (e.name === 'AbortError') throw new ConnectionClosedError(e.message);
  throw e;
}

/** What Redis would have answered for a Lua value (msgpack keeps Lua's own: false, true, floats). */
function asReply(v: unknown): unknown {
  if (v === false || v === null || v === undefined) return null;
  if (v === true) return 1;
  if (typeof v === 'number') return Math.trunc(v);
  if (Array.isArray(v)) return v.map(asReply);
  if (typeof v === 'object') return Object.keys(v).length === 0 ? [] : v; // an empty Lua table
  return v;
}

/**
 * Jobs dispatched to a worker by the add that queues them (the gateway's dispatching add, shared
 * queue/fast-path/dispatch.ts). A worker that blocks on its queue's marker, with a slot free in the runner,
 * registers as blocked for as long as its block lasts, and blocks on its inbox too. An add that
 * finds it there takes the job for it — the take it would have made once the marker woke it, with a
 * token of its own, its lock, and the activation of the job's invocation — and puts the answer in
 * the inbox: the block ends holding the job, one round trip to Redis sooner, and BullMQ's fetch
 * that follows the block is answered here, so the worker processes the job as one it took itself.
 *
 * A job dispatched to a worker that no longer blocks waits in its inbox for its next block (or, if
 * the runner is gone, for its lock to lapse, when the stalled check moves it back to wait, as for
 * any job a dead runner held; the gone-runner watch does it within a second).
 */
export class DispatchedTakes {
  private readonly answers: { raw: unknown; token: string }[] = [];

  constructor(
    private readonly worker: Worker,
    private readonly takes: TakenActivations,
    private readonly settings: {
      runner: string;
      /** The queue's key (BullMQ's prefix and queue name). */
      queueKey: string;
      lockDurationMs: number;
      /** False while the runner has no free slot: the worker then blocks unregistered (as it does closing). */
      ready: () => boolean;
      /** Called for each job dispatched to it. */
      onDelivered?: () => void;
    },
  ) {}

  /** Makes the worker's blocks register it and watch its inbox, and its fetches take what came there. */
  async attach(): Promise<void> {
    const w = this.worker as unknown as DispatchingWorker;
    const client = await w.backend.blockingConnection?.client;
    if (!client) throw new Error('the worker has no blocking connection to watch its inbox on');
    const { runner, queueKey } = this.settings;
    const inbox = dispatchKeys.inbox(queueKey, runner);
    const blocked = dispatchKeys.blocked(queueKey);
    const offers = dispatchKeys.offers(queueKey);
    const offer: DispatchOffer = {
      inbox,
      lockDuration: this.settings.lockDurationMs,
      name: runner,
      head: this.takes.offerHead(),
    };
    const offerJson = JSON.stringify(offer);
    client.defineCommand('meshRegisterBlocked', { numberOfKeys: 2, lua: runnerLua.text('register-blocked') });
    // Set on the proxy, written through to the ioredis client BullMQ's backend calls it on.
    client.bzpopmin = async (marker, timeout) => {
      const block = client.pipeline();
      if (this.settings.ready() && !w.closing)
        block.meshRegisterBlocked(blocked, offers, runner, Math.ceil(Number(timeout) * 1000), offerJson);
      block.bzpopminBuffer(marker!, inbox, timeout!);
      // A pipeline cut by its connection's close fails "aborted", where BullMQ's lone block fails
      // "closed", which BullMQ reads as the connection's end and does not report as an error.
      const replies = (await block.exec().catch(asClosed)) ?? [];
      const [err, popped] = replies[replies.length - 1] ?? [null, null];
      if (err) asClosed(err);
      if (!popped) return null;
      const [key, member, score] = popped as Buffer[];
      if (key!.toString() !== inbox) {
        // Woken by the marker, it blocks no longer: no add picks it until it blocks again.
        client.zrem(blocked, runner).catch(() => undefined);
        return [key!.toString(), member!.toString(), score!.toString()];
      }
      const [token, raw] = unpack(member!) as [string, unknown];
      this.answers.push({ token, raw: asReply(raw) });
      return [marker, '0', '0']; // as the marker would: BullMQ fetches next, and gets the job here
    };
    const moveToActive = w.moveToActive.bind(w);
    w.moveToActive = (token, name) => (this.answers.length > 0 ? this.deliver() : moveToActive(token, name));
  }

  /** The next dispatched job, to the worker as its own fetch would have brought it. */
  private deliver(): Promise<Job | undefined> {
    const w = this.worker as unknown as DispatchingWorker;
    const { raw, token } = this.answers.shift()!;
    this.takes.keep(raw);
    const [jobData, id, rateLimitDelay, delayUntil] = raw2NextJobData(raw as never) as [
      unknown,
      string | undefined,
      number,
      number,
    ];
    w.updateDelays(rateLimitDelay, delayUntil);
    this.settings.onDelivered?.();
    return w.nextJobFromJobData(jobData, id, token);
  }
}

/** Takes `runner` out of its workers' queues' blocked sets and offers: no add dispatches to it. */
export async function withdrawDispatches(
  redis: MeshRedis,
  workers: readonly Worker[],
  runner: string,
): Promise<void> {
  const write = redis.pipeline();
  for (const w of workers) {
    write.zrem(dispatchKeys.blocked(w.toKey('')), runner);
    write.hdel(dispatchKeys.offers(w.toKey('')), runner);
  }
  await write.exec();
}
