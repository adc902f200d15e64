import { JOB_RETRY, type JobData, type KeyLayout } from '@agentmesh/shared';
import type { MeshRedis, MeshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { GatewaySessions } from '../sessions/gateway-sessions.js';
import { InvocationReader } from './invocation-reader.js';
import type { StartOptions } from './start-options.js';

// The `recent` set (GET /invocations) holds at most this many roots; older ones stay readable by id.
const RECENT_LIMIT = 100_000;

/**
 * The writes around a root invocation's creation, shared by invoke (invocation-service.ts) and forks
 * (fork-service.ts): its job enqueued, its listing in `recent`, its take-back when the creation
 * could not be completed, and waiting for one that another request is creating.
 */
export abstract class InvocationWriter extends InvocationReader {
  /** Sessions (docs/guides/sessions.md); undefined when the service was built without a session store. */
  abstract readonly sessions: GatewaySessions | undefined;

  constructor(
    redis: MeshRedis,
    scripts: MeshScripts,
    keys: KeyLayout,
    protected readonly queues: Map<string, Queue>,
    protected readonly retentionSeconds: number,
  ) {
    super(redis, scripts, keys);
  }

  /**
   * Adds a root to the `recent` set (unless listed already: a rejoined one keeps its place) and
   * keeps the set bounded: entries older than the retention go (their invocations have expired),
   * the set holds at most `RECENT_LIMIT` entries, and it expires a retention period after the last
   * invocation was created.
   */
  async listRecent(id: string, now: number): Promise<void> {
    await this.scripts.listRecent(this.keys.recent(), ...this.listing(id, now));
  }

  /** The listing's arguments (list-recent.lua, and the create's on one server): now, id, oldest kept, limit, TTL. */
  protected listing(id: string, now: number): (string | number)[] {
    return [now, id, now - this.retentionSeconds * 1000, RECENT_LIMIT, this.retentionSeconds];
  }

  /**
   * Removes an invocation whose creation could not be completed: its job (if any), keys (a fork's
   * records and texts too) and listing, and its place in its session (which then goes on to the next).
   */
  async takeBack(agent: string, id: string, opts: Pick<StartOptions, 'session'>): Promise<void> {
    if (opts.session && this.sessions) {
      const sid = opts.session.id;
      await this.sessions.store.advance(sid, id, [], true).catch(() => undefined);
      await this.sessions.settle(sid).catch(() => undefined);
    }
    await this.queues
      .get(agent)
      ?.remove(id)
      .catch(() => 0);
    await this.redis
      .del(this.keys.invocation(id, id), this.keys.calls(id, id), this.keys.events(id), this.keys.texts(id))
      .catch(() => 0);
    await this.redis.zrem(this.keys.recent(), id).catch(() => 0);
  }

  /** Adds the invocation's job; BullMQ ignores a second add of the same job id. */
  async enqueue(agent: string, id: string, traceparent: string | undefined): Promise<void> {
    const data: JobData = { v: 1, invocationId: id, rootId: id, agent };
    if (traceparent) data.traceparent = traceparent;
    await this.queues.get(agent)!.add(agent, data, {
      jobId: id,
      ...JOB_RETRY,
      removeOnComplete: { age: this.retentionSeconds },
      removeOnFail: { age: this.retentionSeconds },
    });
  }

  /** True when the root invocation `id` exists, polling up to `graceMs` for it to appear. */
  async exists(id: string, graceMs: number): Promise<boolean> {
    const until = Date.now() + graceMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      if ((await this.redis.exists(this.keys.invocation(id, id))) === 1) return true;
      if (Date.now() >= until) return false;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
