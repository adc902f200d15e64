import {
  type CallRecord,
  childId,
  isTerminal,
  type PlannedCall,
  toChatMessageContent,
} from '@agentmesh/shared';
import { Job, WaitingChildrenError } from 'bullmq';
import { agentLabel } from '../metrics.js';
import type { Activation, ChildSubmission } from '../store/activation-store.js';
import type { RunnerContext } from './runner-context.js';

/** A sub-agent call to submit; a code agent's carries the memory writes committed before it. */
type Delegation = Extract<PlannedCall, { args: Record<string, unknown> }> & {
  memory?: [key: string, valueJson: string][];
};

/**
 * Submits every sub-agent call of a turn as a child invocation on the child agent's queue, all
 * before the parent parks. Ids are deterministic, so a re-run after a crash submits nothing twice
 * (BullMQ treats a known job id as a no-op and re-links it to the parent).
 */
export async function submitDelegations(
  ctx: RunnerContext,
  job: Job,
  a: Activation,
  calls: Delegation[],
): Promise<void> {
  if (calls.length === 0) return;
  const s = a.state;
  const fresh: ChildSubmission[] = [];
  for (const c of calls) {
    if (a.records.has(c.callId)) continue;
    const child = ctx.plan.agents[c.name]!;
    const record: CallRecord = {
      v: 1,
      callId: c.callId,
      kind: 'subagent',
      name: c.name,
      status: 'started',
      startedAt: new Date().toISOString(),
      runner: ctx.runnerId,
      providerId: c.providerId,
      childId: childId(s.id, c.callId),
      ...(c.memory && c.memory.length > 0 ? { memory: c.memory } : {}),
    };
    // Arguments go to the child unchanged; context injection is for tools only (DESIGN §6).
    fresh.push({
      callId: c.callId,
      record,
      agent: c.name,
      input: c.args,
      deadline: s.deadline,
      defHash: child.definitionHash,
    });
  }
  if (fresh.length > 0) await ctx.store.submitChildren(a, fresh);
  for (const f of fresh)
    ctx.metrics.delegations.inc({
      agent: agentLabel(ctx.plan, s.agent),
      subagent: agentLabel(ctx.plan, f.agent),
      outcome: 'started',
    });
  const byQueue = new Map<string, Delegation[]>();
  for (const c of calls) byQueue.set(c.name, [...(byQueue.get(c.name) ?? []), c]);
  await Promise.all(
    [...byQueue].map(([agent, group]) =>
      ctx.queues.get(agent)!.addBulk(
        group.map((c) => {
          const id = childId(s.id, c.callId);
          return {
            name: agent,
            data: {
              v: 1,
              invocationId: id,
              rootId: s.rootId,
              agent,
              ...(s.traceparent ? { traceparent: s.traceparent } : {}),
            },
            opts: {
              jobId: id,
              parent: { id: job.id!, queue: job.queueQualifiedName },
              // A failed child job must never leave its parent waiting forever (bullmq #3362).
              ignoreDependencyOnFailure: true,
              attempts: 3,
              backoff: { type: 'exponential', delay: 500 },
              removeOnComplete: { age: ctx.retentionSeconds },
              removeOnFail: { age: ctx.retentionSeconds },
            },
          };
        }),
      ),
    ),
  );
}

/**
 * Parks a parent on its children: `waiting` is recorded, then the job moves to waiting-children and
 * its worker slot is released (WaitingChildrenError). When every child finished meanwhile, it stays
 * `running`, takes over the outcome of any child lost at the queue level, and goes on at once.
 */
export async function parkOnChildren(
  ctx: RunnerContext,
  a: Activation,
  job: Job,
  token: string,
): Promise<void> {
  await ctx.store.park(a, 'waiting');
  if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
  await ctx.store.park(a, 'running');
  await failLostChildren(ctx, a);
}

/**
 * After the parent found no pending children, a sub-agent record still `started` means its child
 * job ended without finishing the child (it failed for good at the queue level): the child is
 * failed now, which completes the parent's record with the reason.
 */
async function failLostChildren(ctx: RunnerContext, a: Activation): Promise<void> {
  for (const r of a.records.values()) {
    if (r.kind !== 'subagent' || r.status !== 'started' || !r.childId) continue;
    const child = await ctx.store.readState(a.state.rootId, r.childId);
    if (!child) {
      const error = { code: 'subagent_failed', message: 'the child invocation is gone' };
      await ctx.store.record(a, { ...r, status: 'failed', finishedAt: new Date().toISOString(), error });
      continue;
    }
    if (isTerminal(child.status)) {
      // The child finished before this record was (re)written: a code agent whose records were
      // discarded made the same call again. Its outcome is taken over as is.
      const outcome: Partial<CallRecord> =
        child.status === 'succeeded'
          ? { status: 'succeeded', content: toChatMessageContent(child.output ?? null) }
          : {
              status: child.status === 'cancelled' ? 'cancelled' : 'failed',
              ...(child.error ? { error: child.error } : {}),
            };
      await ctx.store.record(a, { ...r, ...outcome, finishedAt: new Date().toISOString() });
      continue;
    }
    const job = await Job.fromId(ctx.queues.get(r.name)!, r.childId);
    const reason = job?.failedReason ? `the child job failed: ${job.failedReason}` : 'the child job was lost';
    await ctx.store.finish(child, undefined, {
      status: 'failed',
      error: { code: 'subagent_failed', message: reason },
    });
  }
  a.records = await ctx.store.reloadRecords(a.state);
}
