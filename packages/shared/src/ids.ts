import { createHash, randomBytes } from 'node:crypto';

// Both test ids from request paths: fixed-length classes, no nested quantifier, so linear.
const ROOT_ID = /^inv_[0-9a-f]{32}$/;
const ANY_ID = /^inv_[0-9a-f]{32}(-[0-9a-f]{16})?$/;

// Random bytes drawn 4 KiB at a time: one call into the CSPRNG per 256 ids instead of one each
// (crypto.randomUUID keeps a cache the same way).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** A new root invocation id: `inv_` + 128 random bits in hex. */
export function newRootId(): string {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + 16);
  poolOffset += 16;
  return `inv_${hex}`;
}

/**
 * The id of the child invocation a parent's call starts: deterministic (a re-run after a crash
 * submits the same child, which BullMQ treats as a no-op) and carrying the root's id, so every
 * key of the tree can be built from any id of it.
 */
export function childId(parentId: string, callId: string): string {
  const digest = createHash('sha256').update(`${parentId}/${callId}`).digest('hex').slice(0, 16);
  return `${rootOf(parentId)}-${digest}`;
}

/** The root invocation id of any invocation id. */
export function rootOf(id: string): string {
  return id.slice(0, 36);
}

/** True for a well-formed invocation id (root or child). */
export function isInvocationId(id: string): boolean {
  return ANY_ID.test(id);
}

/** True for a root invocation id. */
export function isRootId(id: string): boolean {
  return ROOT_ID.test(id);
}

/** The call id of turn `turn`'s model call. */
export function modelCallId(turn: number): string {
  return `t${turn}-model`;
}

/** The call id of the `index`-th tool or sub-agent call in turn `turn`'s model reply. */
export function toolCallId(turn: number, index: number): string {
  return `t${turn}-call${index}`;
}

/** Orders call ids as they happened: by turn, the model call first, then by index. */
export function compareCallIds(a: string, b: string): number {
  const rank = (id: string): [number, number] => {
    // Linear: `\d+` ends at the fixed `-`, and each alternative is tried once from there.
    const m = /^t(\d+)-(?:model|call(\d+)|(.+))$/.exec(id);
    if (!m) return [Number.MAX_SAFE_INTEGER, 0];
    return [Number(m[1]), m[2] === undefined ? (m[3] === undefined ? -1 : 1e9) : Number(m[2])];
  };
  const [ta, ia] = rank(a);
  const [tb, ib] = rank(b);
  return ta - tb || ia - ib || (a < b ? -1 : a > b ? 1 : 0);
}
