import { type Job, raw2NextJobData, type Worker } from 'bullmq';
import { Packr } from 'msgpackr';
import type { TrailingTaker } from '../../loop/fast-path-ports.js';
import { TRAILING_TAKE } from './fetch-scripts.js';
import type { TakenActivations } from './take-activation.js';

/** The parts of a BullMQ 6 worker a trailing take goes through (private in its types). */
interface TakingWorker {
  id: string;
  opts: { lockDuration?: number; limiter?: unknown; name?: string };
  keys: Record<string, string>;
  closing: Promise<void> | null;
  paused: boolean;
  running: boolean;
  /** The main loop's queue of jobs it holds (BullMQ's AsyncFifoQueue); null when it does not run. */
  mainLoopQueue: { add(job: Promise<unknown>): void } | null;
  createJob(data: unknown, id: string): Job;
  processJob(job: Job, token: string, fetchNext: () => boolean): Promise<unknown>;
  emit(event: 'active', job: Job, prev: string): boolean;
}

type Reply = (err: Error | null, raw: unknown) => void;
type TakeStep = (args: unknown[], reply: Reply) => unknown;

/** The take's settings as BullMQ packs them (its backend's packer). */
const packer = new Packr({ useRecords: false, encodeUndefinedAsNil: true });

/**
 * Trailing takes: a worker of the runner whose step puts a job in the wait list takes it in a step
 * that trails that one on the same connection. A delegation's first child is taken behind its add
 * (the guarded add of guarded-add.ts, told which job trails), a parent behind the completion of the
 * child that moves it on (a parent take, finish-in-completion.ts). Such a job otherwise waits for the step to wake
 * a worker — another process, or this one from its blocking pop — whose take then crosses to
 * Redis and back: here the job and its activation (take-activation.ts) come back right behind the
 * step's own answer, and its run starts at once, in the process that is awake already.
 *
 * The job is taken as BullMQ's worker takes it (its own step, a token of the worker's, its lock),
 * so from its take on it is BullMQ's: the worker processes it (lock renewal, completion, failure)
 * in its main loop's queue, as a job fetched by the completion of another. Any job may be the one
 * taken — the queue's oldest waiting — or none, when a worker elsewhere took it first.
 */
export class TrailingTakes implements TrailingTaker {
  private taken = 0;

  constructor(
    private readonly worker: Worker,
    private readonly takes: TakenActivations,
    /** False while the runner has no free slot: the job is left to a worker that has one. */
    private readonly ready: () => boolean,
  ) {}

  /**
   * Whether the worker can take a job now: it runs, and the runner has a free slot — or will have
   * one at once, `freeing` the caller's own (a parent that parks on the children it submits).
   */
  canTake(freeing = false): boolean {
    const w = this.worker as unknown as TakingWorker;
    return (freeing || this.ready()) && w.running && !w.closing && !w.paused && w.mainLoopQueue !== null;
  }

  /**
   * Queues a take on `target` (a pipeline, or a connection: of either, the step goes out right
   * behind the last one queued; defineFetchScripts registered it there); the job it takes goes to
   * the worker, and its answer to a callback of its own, not to the caller. With `only`, it takes
   * that job alone, when it is the next to be taken.
   */
  queue(target: object, only?: string): void {
    const w = this.worker as unknown as TakingWorker;
    const send = (target as Record<string, TakeStep>)[TRAILING_TAKE];
    if (typeof send !== 'function') throw new Error(`${TRAILING_TAKE} is not defined on the connection`);
    const token = `${w.id}:h${this.taken++}`;
    const k = w.keys;
    const now = Date.now();
    // As BullMQ's own fetch builds them (its backend's moveToActive), with the take's settings last.
    const args = [
      ...[k.wait, k.active, k.prioritized, k.events, k.stalled, k.limiter, k.delayed, k.paused],
      ...[k.meta, k.pc, k.marker],
      k[''],
      now,
      packer.pack({ token, lockDuration: w.opts.lockDuration, limiter: w.opts.limiter, name: w.opts.name }),
      this.takes.settings(now, only),
    ];
    send.call(target, args, (err, raw) => {
      if (!err) this.receive(raw, token);
    });
  }

  /** The take's answer: the job it took (if any) goes to the worker, its activation to the takes. */
  private receive(raw: unknown, token: string): void {
    this.takes.keep(raw);
    const [data, id] = raw2NextJobData(raw as never) as [unknown, string | undefined];
    if (!data || id === undefined) return;
    const w = this.worker as unknown as TakingWorker;
    const job = w.createJob(data, id);
    job.token = token;
    w.emit('active', job, 'waiting');
    // Its completion fetches nothing: the main loop may be in a blocking pop, not reading its queue.
    const processing = w.processJob(job, token, () => false);
    if (w.mainLoopQueue) w.mainLoopQueue.add(processing);
    else processing.catch(() => undefined); // the worker closed since: BullMQ's own handling stands
  }
}
