import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyLayout, Logger } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Worker } from 'bullmq';
import { runnerLua } from './runner-lua.js';

/** How long a lease outlives its holder's last renewal; the holder renews it every third of that. */
const LEASE_MS = 6000;
/** How long a runner stands by before it looks at the queue itself: BullMQ's drainDelay, 5 s. */
const STANDBY_MS = 5000;
/**
 * A holder falls behind when a new job it takes was added BEHIND_MS or more before (its event loop
 * busy, its CPU short): it then wakes a runner standing by to take some of what waits, at most every
 * HELP_MS. Measured at the realistic load (docs/architecture/queue-fast-path.md, "Affinity").
 */
const BEHIND_MS = 50;
const HELP_MS = 100;

/** What a take's job tells of its wait: when it was added, after what delay, and how many takes it had. */
interface TakenJob {
  timestamp: number;
  attemptsStarted: number;
  opts?: { delay?: number };
}

type LeaseStep = 'claim' | 'renew' | 'peek' | 'release';

/** The connection the lease's step is defined on (lua/taker-lease.lua). */
interface LeaseConnection {
  meshTakerLease(numberOfKeys: number, ...args: (string | number)[]): Promise<string[]>;
}

/** The parts of a BullMQ 6 worker that standing by goes through (private in its types). */
interface StandingWorker {
  closing: unknown;
  paused: boolean;
  waitForJob(blockUntil?: number): Promise<number>;
  moveToActive(token: string, name?: string): Promise<unknown>;
  /** BullMQ's Redis backend; `blockingClient` is the worker's own blocking connection. */
  backend: { blockingClient?: Promise<{ bzpopmin(key: string, timeout: number): Promise<unknown> }> };
}

export interface AffinityOptions {
  /** The runner's store connection, where the lease's step is defined. */
  store: MeshRedis;
  keys: KeyLayout;
  runnerId: string;
  log: Logger;
}

/**
 * Keeps each agent's jobs on one runner while it keeps up (docs/architecture/queue-fast-path.md,
 * "Affinity"). Redis hands a queue's marker to the client blocked on it longest, so with every runner
 * blocked on every queue, the runner that has just taken a job is last in line for the next: runs
 * alternate between runners, and each lands on one that sat out the run before, at up to a fifth
 * more CPU a run. Here one runner per queue, the holder of its lease (agentTaker), blocks on the
 * queue's marker; the others stand by on the queue's wake-up set (agentStandby) and look at the
 * queue themselves every STANDBY_MS, as an idle BullMQ worker does anyway, so a holder that stops
 * taking (stopped, in a long GC) holds a job up that long at most. A holder that falls behind wakes
 * one to take some of what waits (BEHIND_MS); it gives its leases up, waking one per queue, when its
 * slots run short and when it leaves, and the gone-runner watch does so for a runner whose process
 * is gone; a lease nobody renews lapses after LEASE_MS. A runner short of slots claims no lease;
 * where nobody holds one, every runner blocks on the marker, as without affinity. Any runner may
 * take any job.
 */
export class RunnerAffinity {
  /** The agents whose workers this runner attached: the ones it hosts. */
  private readonly hosted: string[] = [];
  /** The agents whose lease this runner holds, as it last knew. */
  private readonly held = new Set<string>();
  /**
   * When a runner standing by claims again, by agent: a claim that found another holder is not
   * repeated at every look, only once its lease could have lapsed or when a wake-up says it changed.
   */
  private readonly claimAfter = new Map<string, number>();
  private short = false;
  private leaving = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly conn: LeaseConnection;

  constructor(private readonly opts: AffinityOptions) {
    opts.store.defineCommand('meshTakerLease', { lua: runnerLua.text('taker-lease') });
    this.conn = opts.store as unknown as LeaseConnection;
  }

  /** Renews the leases held every third of their length. */
  start(): void {
    this.timer ??= setInterval(() => void this.renew(), Math.floor(LEASE_MS / 3));
    this.timer.unref();
  }

  /**
   * Makes `worker` (of `agent`'s queue) block on the queue's marker only while this runner holds
   * the agent's lease, or nobody does; else it stands by, and looks at the queue when woken or
   * after STANDBY_MS (BullMQ takes a job after a wait that returns 0).
   */
  attach(worker: Worker, agent: string): void {
    this.hosted.push(agent);
    const w = worker as unknown as StandingWorker;
    const wait = w.waitForJob.bind(w);
    const closed = new Promise<void>((resolve) => worker.once('closing', () => resolve()));
    const take = w.moveToActive.bind(w);
    let helpAt = 0;
    // A new job (its first take) that waited BEHIND_MS or more for this holder: a runner standing by
    // is woken to take some of what waits, at most every HELP_MS. A parent's job taken again after
    // its children has waited for them, not for the holder: not counted.
    w.moveToActive = async (token, name) => {
      const job = (await take(token, name)) as TakenJob | undefined;
      const now = Date.now();
      if (job && job.attemptsStarted <= 1 && this.held.has(agent) && now >= helpAt) {
        const waited = now - job.timestamp - (job.opts?.delay ?? 0);
        if (waited >= BEHIND_MS) {
          helpAt = now + HELP_MS;
          this.opts.store.zadd(this.opts.keys.agentStandby(agent), 0, 'wake').catch(() => undefined);
        }
      }
      return job;
    };
    w.waitForJob = async (blockUntil) => {
      const stopping = () => Boolean(w.closing) || w.paused;
      if (stopping() || (await this.takes(agent)) || stopping()) return wait(blockUntil);
      if (await this.standBy(w, agent, blockUntil, closed)) this.claimAfter.delete(agent);
      return 0;
    };
  }

  /** The runner's slots ran short (its last one taken), or have room again (queue/slots.ts). */
  setShort(short: boolean): void {
    if (short === this.short) return;
    this.short = short;
    if (short) void this.release();
  }

  /** The runner leaves (a drain): it gives every lease up and claims none again. */
  async leave(): Promise<void> {
    this.leaving = true;
    clearInterval(this.timer);
    await this.release();
  }

  /** Runner `id` is gone (the gone-runner watch): its leases of `agents` are given up now, not when they lapse. */
  async handOnFrom(id: string, agents: readonly string[]): Promise<void> {
    await this.step('release', agents, id);
  }

  /**
   * Whether this runner blocks on `agent`'s marker: it holds the lease, or nobody does. Where
   * nobody holds it, it claims it with every other free lease of the agents it hosts.
   */
  private async takes(agent: string): Promise<boolean> {
    const { runnerId } = this.opts;
    if (this.held.has(agent) && !this.short && !this.leaving) return true;
    if (Date.now() < (this.claimAfter.get(agent) ?? 0)) return false;
    const claiming = !this.short && !this.leaving;
    const agents = claiming ? [agent, ...this.hosted.filter((a) => a !== agent)] : [agent];
    try {
      const holders = await this.step(claiming ? 'claim' : 'peek', agents);
      for (const [i, holder] of holders.entries()) {
        if (holder === runnerId && claiming) this.held.add(agents[i]!);
        else this.held.delete(agents[i]!);
      }
      const holder = holders[0];
      if (holder !== runnerId && holder !== '') this.claimAfter.set(agent, Date.now() + LEASE_MS);
      return holder === runnerId || holder === '';
    } catch {
      return true; // Redis unreachable: BullMQ's own wait reports it and retries
    }
  }

  /**
   * Waits for a wake-up on `agent`'s standby set, STANDBY_MS or until `blockUntil` (a delayed job is
   * due) at most; true when woken.
   */
  private async standBy(
    w: StandingWorker,
    agent: string,
    blockUntil: number | undefined,
    closed: Promise<void>,
  ) {
    const ms = Math.min(STANDBY_MS, blockUntil ? blockUntil - Date.now() : Number.POSITIVE_INFINITY);
    if (ms < 1) return false;
    const cap = new AbortController();
    try {
      const client = await w.backend.blockingClient;
      if (!client) throw new Error('the worker has no blocking connection');
      const woken = client.bzpopmin(this.opts.keys.agentStandby(agent), Math.max(ms, 10) / 1000);
      // Raced as BullMQ races its own block: a command that never settles (a reconnect resends it)
      // must not hold the worker; the next wait on that connection queues behind it at worst.
      woken.catch(() => undefined);
      const popped = await Promise.race([woken, closed, sleep(ms + 1000, undefined, { signal: cap.signal })]);
      return Array.isArray(popped);
    } catch (e) {
      if ((e as Error).name === 'AbortError') return false;
      // The blocking connection dropped or closed: pause as BullMQ does after a failed wait.
      this.opts.log.debug({ err: (e as Error).message }, 'affinity: standing by failed');
      await Promise.race([closed, sleep(Math.min(ms, 1000), undefined, { signal: cap.signal })]).catch(
        () => {},
      );
      return false;
    } finally {
      cap.abort();
    }
  }

  private async renew(): Promise<void> {
    const agents = [...this.held];
    if (agents.length === 0 || this.leaving) return;
    try {
      const holders = await this.step('renew', agents);
      for (const [i, holder] of holders.entries())
        if (holder !== this.opts.runnerId) this.held.delete(agents[i]!);
    } catch (e) {
      this.opts.log.debug(
        { err: (e as Error).message },
        'affinity: renewing the leases failed; they lapse unless the next renewal passes',
      );
    }
  }

  private async release(): Promise<void> {
    const agents = [...this.held];
    this.held.clear();
    if (agents.length > 0) await this.step('release', agents).catch(() => undefined); // they lapse by themselves
  }

  private step(step: LeaseStep, agents: readonly string[], runner = this.opts.runnerId): Promise<string[]> {
    const { keys } = this.opts;
    const pairs = agents.flatMap((agent) => [keys.agentTaker(agent), keys.agentStandby(agent)]);
    return this.conn.meshTakerLease(pairs.length, ...pairs, runner, LEASE_MS, step);
  }
}
