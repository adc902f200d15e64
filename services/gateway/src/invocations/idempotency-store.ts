import { createHash } from 'node:crypto';
import { canonicalJson, type KeyLayout, MeshError } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/** What an Idempotency-Key holds: the invocation it started and the hash of the body it came with. */
export interface IdempotencyEntry {
  v: 1;
  invocationId: string;
  bodyHash: string;
  /** When it was claimed (epoch ms). */
  at: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The Idempotency-Keys of `POST /agents/{name}/invoke` and `POST /invocations/{id}/fork`: one Redis
 * string per (API key, agent or forked invocation, Idempotency-Key), claimed with one atomic SET
 * NX, kept for the retention period.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: MeshRedis,
    private readonly keys: KeyLayout,
    private readonly ttlSeconds: number,
  ) {}

  /** The scope of a key: sha256 of owner, agent and Idempotency-Key (`|` cannot occur in the first two). */
  static scope(owner: string | undefined, agent: string, idempotencyKey: string): string {
    return sha256(`${owner ?? ''}|${agent}|${idempotencyKey}`);
  }

  /**
   * The scope of a fork's key (docs/guides/durability.md): owner, the invocation forked and Idempotency-Key. Its
   * text starts `fork|`, which no invoke scope's can (an owner is hex or empty), so it never
   * matches an invoke's key.
   */
  static forkScope(owner: string | undefined, sourceId: string, idempotencyKey: string): string {
    return sha256(`fork|${owner ?? ''}|${sourceId}|${idempotencyKey}`);
  }

  /** The hash of a validated body, whatever the order of its keys. */
  static bodyHash(body: unknown): string {
    return sha256(canonicalJson(body));
  }

  /** The entry holding `scope`, if any (a read: nothing is claimed). */
  async peek(scope: string): Promise<IdempotencyEntry | undefined> {
    const held = await this.redis.get(this.keys.idempotency(scope));
    return held === null ? undefined : decode(held);
  }

  /**
   * Claims `scope` for `entry` and returns `entry`; when another request holds it, returns that
   * request's entry instead (the holder of a race is whoever's SET NX landed first).
   */
  async claim(scope: string, entry: IdempotencyEntry): Promise<IdempotencyEntry> {
    const key = this.keys.idempotency(scope);
    for (;;) {
      const set = await this.redis.set(key, JSON.stringify(entry), 'EX', this.ttlSeconds, 'NX');
      if (set === 'OK') return entry;
      const held = await this.redis.get(key);
      // Expired between the two steps: try to claim it again.
      if (held !== null) return decode(held);
    }
  }
}

function decode(text: string): IdempotencyEntry {
  const e = JSON.parse(text) as IdempotencyEntry;
  if (e.v !== 1) throw new MeshError('unsupported_version', `Idempotency entry has unknown version ${e.v}.`);
  return e;
}
