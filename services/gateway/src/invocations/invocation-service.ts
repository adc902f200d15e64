import {
  type AgentPlan,
  encodeEvent,
  encodeNewInvocation,
  finishArgs,
  type InvocationView,
  isTerminal,
  type JobData,
  type KeyLayout,
  type MeshScripts,
  newRootId,
  readInvocation,
  rootOf,
  toInvocationView,
} from '@agentmesh/shared';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Waiters } from './waiters.js';

/** Starts root invocations and reads them back: the gateway's side of the state in Redis. */
export class InvocationService {
  constructor(
    private readonly redis: Redis,
    private readonly scripts: MeshScripts,
    private readonly keys: KeyLayout,
    private readonly queues: Map<string, Queue>,
    private readonly waiters: Waiters,
    private readonly retentionSeconds: number,
  ) {}

  /** Creates a root invocation, enqueues it, and waits up to `waitMs` for it to finish. */
  async start(
    agent: AgentPlan,
    input: unknown,
    opts: { timeoutMs: number; waitMs: number; traceparent?: string | undefined; signal?: AbortSignal },
  ): Promise<InvocationView> {
    const id = newRootId();
    const now = Date.now();
    const waiter = this.waiters.register(id);
    const who = { id, agent: agent.name };
    try {
      await this.scripts.createInvocation(
        this.keys.invocation(id, id),
        this.keys.events(id),
        encodeEvent(who, 'status', { status: 'queued' }, now),
        ...encodeNewInvocation({
          id,
          agent: agent.name,
          input,
          rootId: id,
          depth: 0,
          createdAt: now,
          deadline: now + opts.timeoutMs,
          defHash: agent.definitionHash,
          ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
        }),
      );
      await this.redis.zadd(this.keys.recent(), now, id);
      const data: JobData = { v: 1, invocationId: id, rootId: id, agent: agent.name };
      if (opts.traceparent) data.traceparent = opts.traceparent;
      await this.queues.get(agent.name)!.add(agent.name, data, {
        jobId: id,
        attempts: 3,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: { age: this.retentionSeconds },
        removeOnFail: { age: this.retentionSeconds },
      });
      if (opts.waitMs > 0) await waiter.wait(opts.waitMs, opts.signal);
    } finally {
      waiter.cancel();
    }
    return (await this.view(id))!;
  }

  /** The InvocationView of any invocation of any tree, or undefined. */
  async view(id: string): Promise<InvocationView | undefined> {
    const found = await readInvocation(this.redis, this.keys, id);
    return found && toInvocationView(found.state, found.calls);
  }

  /**
   * Cancels an invocation and its whole subtree (never its ancestors): flags every node in Redis,
   * which every runner checks before each call; broadcasts the ids so runners abort calls in
   * flight; removes jobs still queued and finishes their invocations `cancelled` here. Parked
   * parents resume when their children end and finish `cancelled`. Returns undefined for an
   * unknown id; a terminal invocation is returned unchanged with `changed: false`.
   */
  async cancel(id: string): Promise<{ view: InvocationView; changed: boolean } | undefined> {
    const before = await this.view(id);
    if (!before) return undefined;
    if (isTerminal(before.status)) return { view: before, changed: false };
    const root = rootOf(id);
    const flat = (await this.scripts.cancelTree(
      this.keys.invocation(root, id),
      this.keys.tree(root),
      id,
    )) as string[];
    const pipeline = this.redis.pipeline();
    for (let i = 0; i < flat.length; i += 2) pipeline.publish(this.keys.cancelChannel(), flat[i]!);
    await pipeline.exec();
    for (let i = 0; i < flat.length; i += 2) {
      if (flat[i + 1] === 'queued') await this.dropQueued(flat[i]!);
    }
    return { view: (await this.view(id))!, changed: true };
  }

  /** A job not yet taken by a runner is removed, and its invocation finished `cancelled` at once. */
  private async dropQueued(id: string): Promise<void> {
    const found = await readInvocation(this.redis, this.keys, id);
    const queue = found && this.queues.get(found.state.agent);
    if (!found || !queue) return;
    const removed = await queue.remove(id).catch(() => 0);
    if (removed !== 1) return; // a runner holds it: it sees the flag and finishes it
    const error = { code: 'cancelled', message: 'The invocation was cancelled.' };
    await this.scripts.finish(
      ...finishArgs(this.keys, found.state, undefined, { status: 'cancelled', error }, this.retentionSeconds),
    );
  }

  /** The ids of an invocation and every invocation it delegated to, transitively. */
  async subtreeIds(id: string): Promise<Set<string>> {
    const ids = new Set([id]);
    const queue = [id];
    while (queue.length > 0) {
      const found = await readInvocation(this.redis, this.keys, queue.shift()!);
      for (const call of found?.calls ?? []) {
        if (call.childId && !ids.has(call.childId)) {
          ids.add(call.childId);
          queue.push(call.childId);
        }
      }
    }
    return ids;
  }

  /** True when the view is in a terminal state. */
  static finished(view: InvocationView): boolean {
    return isTerminal(view.status);
  }
}
