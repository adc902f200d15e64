import { randomUUID } from 'node:crypto';
import { MeshError, type ModelReply } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { abortableSleep } from '../abortable-sleep.js';
import type { ChatModel, ChatRequest } from './chat-model.js';

// KEYS: slots (sorted set: token → lease expiry ms). ARGV: token, now, leaseMs, max.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
return 1`;

/**
 * A model entry's `maxConcurrency`: at most that many calls in flight across every runner. Each
 * call holds a slot in a Redis sorted set with a lease (renewed while it runs), so a runner that
 * dies frees its slots when their leases lapse.
 */
export class ConcurrencyLimitedModel implements ChatModel {
  constructor(
    private readonly inner: ChatModel,
    private readonly redis: MeshRedis,
    private readonly slotsKey: string,
    private readonly max: number,
    private readonly leaseMs = 30_000,
  ) {}

  async complete(req: ChatRequest): Promise<ModelReply> {
    const token = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const got = await this.redis.eval(ACQUIRE, 1, this.slotsKey, token, Date.now(), this.leaseMs, this.max);
      if (got === 1) break;
      if (Date.now() >= req.deadline) {
        throw new MeshError(
          'deadline_exceeded',
          'The invocation ran past its deadline waiting for a model slot.',
        );
      }
      await abortableSleep(Math.min(250, 10 * 2 ** Math.min(attempt, 5)), req.signal);
    }
    const renew = setInterval(
      () =>
        void this.redis.zadd(this.slotsKey, 'XX', Date.now() + this.leaseMs, token).catch(() => undefined),
      Math.floor(this.leaseMs / 3),
    );
    try {
      return await this.inner.complete(req);
    } finally {
      clearInterval(renew);
      await this.redis.zrem(this.slotsKey, token).catch(() => undefined);
    }
  }
}
