import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKey } from '@agentmesh/shared';
import { type Caller, keyCaller } from './caller.js';

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Finds the API key a bearer token is, in constant time: both sides are hashed with sha256 (so
 * every comparison is of 32 bytes whatever the lengths) and compared with `timingSafeEqual`,
 * against every key without stopping at a match.
 */
export class ApiKeyMatcher {
  private readonly entries: { digest: Buffer; caller: Caller }[];

  constructor(keys: readonly ApiKey[]) {
    this.entries = keys.map((k) => {
      const digest = sha256(k.key);
      return { digest, caller: keyCaller(digest.toString('hex'), k.agents) };
    });
  }

  /** The caller whose key `token` is, or undefined. */
  match(token: string): Caller | undefined {
    const given = sha256(token);
    let found: Caller | undefined;
    for (const e of this.entries) {
      if (timingSafeEqual(given, e.digest) && !found) found = e.caller;
    }
    return found;
  }
}
