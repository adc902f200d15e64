import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { CodedError, KeyLayout } from '@agentmesh/shared';
import { type MeshRedis, meshLua } from '@agentmesh/shared/redis';

/** A tool call's outcome as kept under its Idempotency-Key. */
export type StoredOutcome = { ok: true; result: unknown } | { ok: false; error: CodedError };

/** What a key is bound to: the tool it was first used with and the hash of its arguments. */
export interface CallScope {
  tool: string;
  argsHash: string;
}

/** What to do with a call, decided atomically from its key's record and lease. */
export type Admission =
  | { kind: 'run'; lease: Lease }
  | { kind: 'done'; outcome: StoredOutcome }
  | { kind: 'busy' }
  | { kind: 'in_doubt' }
  | { kind: 'reused' };

/** The lease of a running call: renewed while it runs, released with its outcome. */
export interface Lease {
  release(outcome: StoredOutcome): Promise<void>;
  /** Lets go without an outcome (the call was aborted before it finished): the key stays in doubt. */
  abandon(): Promise<void>;
}

/** The outcome store's Lua steps (lua/: each file's header names its keys and arguments). */
export const outcomeLua = meshLua.extend(path.join(import.meta.dirname, 'lua'));
const BEGIN = outcomeLua.text('outcome-begin');
const END = outcomeLua.text('outcome-end');
const ABANDON = outcomeLua.text('outcome-abandon');
const RENEW = outcomeLua.text('outcome-renew');

/**
 * Keeps each Idempotency-Key's outcome (longer than any invocation lives) and a lease while its
 * call runs (docs/architecture/durability-and-fencing.md): a repeated key answers from the outcome, waits while the lease is live,
 * and after an expired lease runs again only for a tool declared idempotent. A key is bound to
 * the tool and arguments it was first used with (docs/reference/bounds.md).
 */
export class OutcomeStore {
  constructor(
    readonly redis: MeshRedis,
    readonly keys: KeyLayout,
    private readonly ttlSeconds: number,
    private readonly leaseMs = 5000,
  ) {}

  /** Decides whether this call runs now, was done already, is running elsewhere, or is in doubt. */
  async admit(idempotencyKey: string, scope: CallScope, idempotent: boolean): Promise<Admission> {
    const token = randomUUID();
    const recordKey = this.keys.toolOutcome(idempotencyKey);
    const leaseKey = this.keys.toolLease(idempotencyKey);
    const [kind, stored] = (await this.redis.eval(
      BEGIN,
      2,
      recordKey,
      leaseKey,
      token,
      this.leaseMs,
      this.ttlSeconds,
      idempotent ? '1' : '0',
      scope.tool,
      scope.argsHash,
    )) as [string, string?];
    if (kind === 'done') return { kind, outcome: JSON.parse(stored!) as StoredOutcome };
    if (kind === 'busy' || kind === 'in_doubt' || kind === 'reused') return { kind };
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
            recordKey,
            leaseKey,
            token,
            JSON.stringify(outcome),
            this.ttlSeconds,
            scope.tool,
            scope.argsHash,
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
