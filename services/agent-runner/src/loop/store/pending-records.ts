import type { KeyLayout } from '@agentmesh/shared';
import { type Activation, FencedOutError, type ScriptPipeline } from './activation.js';
import { recordCallArgs } from './activation-args.js';

/** Queues the activation's deferred records on `p` (and forgets them); returns how many. */
export function queuePending(keys: KeyLayout, activation: Activation, p: ScriptPipeline): number {
  const pending = activation.pending ?? [];
  activation.pending = [];
  for (const w of pending) p.mesh_recordCall!(...recordCallArgs(keys, activation, w, false));
  return pending.length;
}

/** A deferred record that failed or was fenced out fails the write it travelled with. */
export function checkPending(activation: Activation, results: [Error | null, unknown][]): void {
  for (const [err, value] of results) {
    if (err) throw err;
    if (value !== 1) throw new FencedOutError(activation.state.id);
  }
}
