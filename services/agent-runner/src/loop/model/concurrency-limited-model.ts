import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { MeshError, type ModelReply } from '@agentmesh/shared';
import { type MeshRedis, meshLua } from '@agentmesh/shared/redis';
import { abortableSleep } from '../abortable-sleep.js';
import type { ChatModel, ChatRequest } from './chat-model.js';

/** The model limiter's Lua (lua/model-slot.lua: takes a slot). */
export const modelLua = meshLua.extend(path.join(import.meta.dirname, 'lua'));
const ACQUIRE = modelLua.text('model-slot');

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
