import {
  type AgentPlan,
  encodeEvent,
  encodeNewInvocation,
  type InvocationView,
  isTerminal,
  type JobData,
  type KeyLayout,
  type MeshScripts,
  newRootId,
  readInvocation,
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

  /** True when the view is in a terminal state. */
  static finished(view: InvocationView): boolean {
    return isTerminal(view.status);
  }
}
