import type { KeyLayout } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { type Activation, type ChildSubmission, FencedOutError, type ScriptPipeline } from './activation.js';
import { submitChildArgs } from './activation-args.js';
import { checkPending, queuePending } from './pending-records.js';

/** What goes with the submissions: the park, and more steps behind them in the same round trip. */
export interface SubmitOptions {
  /** Marks the invocation `waiting` in the same round trip (see ActivationStore.park). */
  park?: boolean;
  /** The model call the resumption starts with (see ACTIVATE). */
  resumeCall?: string;
  /**
   * Queues more steps on the pipeline after the submissions of the children `callIds` (their
   * jobs), given the key of the invocation's hash (which holds its epoch); `last` for the last
   * write (which has the park). Returns how many; a step queued after those answers to its own
   * callback (the park: queue/fast-path/guarded-park.ts).
   */
  behind?: (
    pipeline: object,
    invocationKey: string,
    part: { callIds: ReadonlySet<string>; last: boolean },
  ) => number;
}

/**
 * Records each sub-agent call `started` and creates its child invocation, behind the activation's
 * deferred records; with `park` the same round trip marks the invocation `waiting`, and `behind`
 * may queue what must follow each child's creation (its job). Resolves with the replies of the
 * steps `behind` queued; throws FencedOutError when fenced out.
 *
 * With `behind` and several children, the first child and its job go out in a write of their own
 * ahead of the others (and the park): Redis answers a batch of steps only once it ran them all, so
 * a runner wakes for the first child while the rest are built, written and run. Every step is
 * fenced on its own, in order on one connection, as in one pipeline; children that finish before
 * the park are the case parkOnChildren handles (steps/delegate.ts).
 */
export async function submitChildren(
  redis: MeshRedis,
  keys: KeyLayout,
  activation: Activation,
  children: ChildSubmission[],
  opts: SubmitOptions = {},
): Promise<[Error | null, unknown][]> {
  const s = activation.state;
  const inv = keys.invocation(s.rootId, s.id);
  const parts = opts.behind && children.length > 1 ? [children.slice(0, 1), children.slice(1)] : [children];
  const sent: Promise<[Error | null, unknown][] | null>[] = [];
  const counts: { pending: number; subs: number; park: number; more: number }[] = [];
  for (const [i, part] of parts.entries()) {
    const pipeline = redis.pipeline();
    const host = pipeline as unknown as ScriptPipeline;
    const last = i === parts.length - 1;
    const pending = i === 0 ? queuePending(keys, activation, host) : 0;
    for (const c of part) host.mesh_submitChild!.call(pipeline, ...submitChildArgs(keys, activation, c));
    const park = last && opts.park ? 1 : 0;
    if (park)
      host.mesh_park!(
        inv,
        keys.events(s.rootId),
        activation.epoch,
        'waiting',
        new Date().toISOString(),
        ...(opts.resumeCall ? ['', opts.resumeCall] : []),
      );
    const more = opts.behind?.(pipeline, inv, { callIds: new Set(part.map((c) => c.callId)), last }) ?? 0;
    counts.push({ pending, subs: part.length, park, more });
    sent.push(pending + part.length + park + more > 0 ? pipeline.exec() : Promise.resolve([]));
  }
  const replies = await Promise.all(sent);
  const behind: [Error | null, unknown][] = [];
  for (const [i, c] of counts.entries()) {
    const results = replies[i] ?? [];
    checkPending(activation, results.slice(0, c.pending));
    for (const [err, value] of results.slice(c.pending, c.pending + c.subs + c.park)) {
      if (err) throw err;
      if (value === 0) throw new FencedOutError(s.id);
    }
    behind.push(...results.slice(c.pending + c.subs + c.park, c.pending + c.subs + c.park + c.more));
  }
  for (const c of children)
    if ((activation.records.get(c.callId)?.status ?? 'approved') === 'approved')
      activation.records.set(c.callId, c.record);
  return behind;
}
