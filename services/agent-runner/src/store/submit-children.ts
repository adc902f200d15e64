import type { KeyLayout, MeshRedis } from '@agentmesh/shared';
import { type Activation, type ChildSubmission, FencedOutError, type ScriptPipeline } from './activation.js';
import { submitChildArgs } from './activation-args.js';
import { checkPending, queuePending } from './pending-records.js';

/** What goes with the submissions: the park, and more steps behind them in the same pipeline. */
export interface SubmitOptions {
  /** Marks the invocation `waiting` in the same round trip (see ActivationStore.park). */
  park?: boolean;
  /** The model call the resumption starts with (see ACTIVATE). */
  resumeCall?: string;
  /**
   * Queues more steps on the pipeline after the submissions and the park, given the key of the
   * invocation's hash (which holds its epoch); returns how many.
   */
  behind?: (pipeline: object, invocationKey: string) => number;
}

/**
 * Records each sub-agent call `started` and creates its child invocation, behind the activation's
 * deferred records, in one pipeline; with `park` the same round trip marks the invocation
 * `waiting`, and `behind` may queue what must follow the children's creation (their jobs). Resolves
 * with the replies of the steps `behind` queued; throws FencedOutError when fenced out.
 */
export async function submitChildren(
  redis: MeshRedis,
  keys: KeyLayout,
  activation: Activation,
  children: ChildSubmission[],
  opts: SubmitOptions = {},
): Promise<[Error | null, unknown][]> {
  const s = activation.state;
  const pipeline = redis.pipeline();
  const host = pipeline as unknown as ScriptPipeline;
  const n = queuePending(keys, activation, host);
  for (const c of children) host.mesh_submitChild!.call(pipeline, ...submitChildArgs(keys, activation, c));
  if (opts.park)
    host.mesh_park!(
      keys.invocation(s.rootId, s.id),
      keys.events(s.rootId),
      activation.epoch,
      'waiting',
      new Date().toISOString(),
      ...(opts.resumeCall ? ['', opts.resumeCall] : []),
    );
  const submitted = n + children.length + (opts.park ? 1 : 0);
  const more = opts.behind?.(pipeline, keys.invocation(s.rootId, s.id)) ?? 0;
  if (submitted + more === 0) return [];
  const results = (await pipeline.exec()) ?? [];
  checkPending(activation, results.slice(0, n));
  for (const [err, value] of results.slice(n, submitted)) {
    if (err) throw err;
    if (value === 0) throw new FencedOutError(s.id);
  }
  for (const c of children)
    if ((activation.records.get(c.callId)?.status ?? 'approved') === 'approved')
      activation.records.set(c.callId, c.record);
  return results.slice(submitted, submitted + more);
}
