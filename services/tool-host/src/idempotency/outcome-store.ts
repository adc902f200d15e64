import { randomUUID } from 'node:crypto';
import type { KeyLayout } from '@agentmesh/shared';
import type { Redis } from 'ioredis';

/** A tool call's outcome as kept under its Idempotency-Key. */
export type StoredOutcome =
  | { ok: true; result: unknown }
  | { ok: false; error: { code: string; message: string } };

/** What to do with a call, decided atomically from its key's record and lease. */
export type Admission =
  | { kind: 'run'; lease: Lease }
  | { kind: 'done'; outcome: StoredOutcome }
  | { kind: 'busy' }
  | { kind: 'in_doubt' };

/** The lease of a running call: renewed while it runs, released with its outcome. */
export interface Lease {
  release(outcome: StoredOutcome): Promise<void>;
  /** Lets go without an outcome (the caller left mid-call): the key stays in doubt. */
  abandon(): Promise<void>;
}

// KEYS: outcome, lease. ARGV: token, leaseMs, ttlSeconds, rerunInDoubt ('1' for idempotent tools).
const BEGIN = `
local o = redis.call('GET', KEYS[1])
if o and o ~= 'started' then return {'done', o} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'busy'} end
if o == 'started' and ARGV[4] ~= '1' then return {'in_doubt'} end
redis.call('SET', KEYS[1], 'started', 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'run'}`;

// KEYS: outcome, lease. ARGV: token, outcomeJSON, ttlSeconds.
const END = `
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;

// KEYS: lease. ARGV: token.
const ABANDON = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

// KEYS: lease. ARGV: token, leaseMs.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/**
 * Keeps each Idempotency-Key's outcome (longer than any invocation lives) and a lease while its
 * call runs (DESIGN §7): a repeated key answers from the outcome, waits while the lease is live,
 * and after an expired lease runs again only for a tool declared idempotent.
 */
export class OutcomeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeyLayout,
    private readonly ttlSeconds: number,
    private readonly leaseMs = 5000,
  ) {}

  /** Decides whether this call runs now, was done already, is running elsewhere, or is in doubt. */
  async admit(idempotencyKey: string, idempotent: boolean): Promise<Admission> {
    const token = randomUUID();
    const outcomeKey = this.keys.toolOutcome(idempotencyKey);
    const leaseKey = this.keys.toolLease(idempotencyKey);
    const [kind, stored] = (await this.redis.eval(
      BEGIN,
      2,
      outcomeKey,
      leaseKey,
      token,
      this.leaseMs,
      this.ttlSeconds,
      idempotent ? '1' : '0',
    )) as [string, string?];
    if (kind === 'done') return { kind, outcome: JSON.parse(stored!) as StoredOutcome };
    if (kind === 'busy' || kind === 'in_doubt') return { kind };
    const renew = setInterval(
      () => void this.redis.eval(RENEW, 1, leaseKey, token, this.leaseMs).catch(() => undefined),
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    return {
      kind: 'run',
      lease: {
        release: async (outcome) => {
          clearInterval(renew);
          await this.redis.eval(
            END,
            2,
            outcomeKey,
            leaseKey,
            token,
            JSON.stringify(outcome),
            this.ttlSeconds,
          );
        },
        abandon: async () => {
          clearInterval(renew);
          await this.redis.eval(ABANDON, 1, leaseKey, token);
        },
      },
    };
  }
}
