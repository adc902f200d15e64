import {
  type CallRecord,
  childId,
  codedError,
  isTerminal,
  type PlannedCall,
  toChatMessageContent,
} from '@agentmesh/shared';
import { Job, WaitingChildrenError } from 'bullmq';
import { agentLabel } from '../metrics.js';
import type { Activation, ChildSubmission } from '../store/activation-store.js';
import { checkChildInput } from './check-child-input.js';
import { addChildJobs, childJobs } from './child-jobs.js';
import type { RunnerContext } from './runner-context.js';

/** A sub-agent call to submit; a code agent's carries the memory writes committed before it. */
type Delegation = Extract<PlannedCall, { args: Record<string, unknown> }> & {
  memory?: [key: string, valueJson: string][];
};

/**
 * Submits every sub-agent call of a turn as a child invocation on the child agent's queue, all
 * before the parent parks. Ids are deterministic, so a re-run after a crash submits nothing twice
 * (BullMQ treats a known job id as a no-op and re-links it to the parent). With `park` (nothing
 * else runs in this turn), the parent is marked `waiting` in the round trip that creates the
 * children, naming `resumeCall` as the model call it resumes with — and on one Redis server, given
 * the job's `token`, its job moves to wait for the children in that round trip too (with the queue
 * fast path: queue/fast-path/guarded-park.ts).
 */
export async function submitDelegations(
  ctx: RunnerContext,
  job: Job,
  activation: Activation,
  calls: Delegation[],
  opts: { park?: boolean; resumeCall?: string; token?: string } = {},
): Promise<Submitted> {
  if (calls.length === 0) return { parked: false };
  const s = activation.state;
  const fresh: ChildSubmission[] = [];
  for (const c of calls) {
    // Submitted already, unless the record is an approval granted since (docs/guides/approvals-and-budgets.md).
    const prev = activation.records.get(c.callId);
    if (prev && prev.status !== 'approved') continue;
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
    // Arguments go to the child unchanged; context injection is for tools only (docs/reference/callables-and-results.md).
    fresh.push({
      callId: c.callId,
      record,
      agent: c.name,
      input: c.args,
      deadline: s.deadline,
      defHash: child.definitionHash,
      // The check the child makes first (see ACTIVATE): done here, it need not hold its model call.
      inputChecked: child.kind === 'react' && checkChildInput(child, c.args) === undefined,
    });
  }
  // A deferred model reply goes out with the children, or alone before their jobs exist.
  const parked = fresh.length > 0 && opts.park === true;
  const park = { park: parked, ...(parked && opts.resumeCall ? { resumeCall: opts.resumeCall } : {}) };
  const jobs = childJobs(job, activation, calls, ctx.retentionSeconds);
  let jobParked: boolean | undefined;
  if (ctx.submitWithJobs) {
    // Each job rides behind its child's submission, in the same writes (queue/fast-path).
    jobParked = await ctx.submitWithJobs({
      job,
      activation,
      calls,
      fresh,
      jobs,
      park,
      token: opts.token,
    });
  } else {
    // BullMQ's own add, once the children exist (on a cluster the queues live apart from the tree).
    if (fresh.length > 0) await ctx.store.submitChildren(activation, fresh, park);
    else await ctx.store.flush(activation);
    await addChildJobs(ctx.queues, jobs);
  }
  for (const f of fresh)
    ctx.metrics.delegations.inc({
      agent: agentLabel(ctx.plan, s.agent),
      subagent: agentLabel(ctx.plan, f.agent),
      outcome: 'started',
    });
  return { parked, ...(jobParked === undefined ? {} : { jobParked }) };
}

/**
 * How a submission left its parent: `parked` when it was marked `waiting` with the submissions;
 * `jobParked` when its job was moved on to wait for its children too — BullMQ's answer: true when
 * it waits, false when no child was pending any more.
 */
export interface Submitted {
  parked: boolean;
  jobParked?: boolean;
}

/**
 * BullMQ's word that a job parked on its children (its worker then frees the slot), built without a
 * stack: it is thrown on every park and never shown, and capturing one took about 1 % of a runner's
 * busy time under load (docs/architecture/where-the-time-goes.md).
 */
function parked(): WaitingChildrenError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new WaitingChildrenError();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Parks a parent on its children: `waiting` is recorded (unless `submitted` says it was, with the
 * submissions), then the job moves to waiting-children (unless it was, likewise) and its worker
 * slot is released (WaitingChildrenError). When every child finished meanwhile, it stays
 * `running`, takes over the outcome of any child lost at the queue level, and goes on at once.
 */
export async function parkOnChildren(
  ctx: RunnerContext,
  activation: Activation,
  job: Job,
  token: string,
  submitted: Submitted = { parked: false },
): Promise<void> {
  if (!submitted.parked) await ctx.store.park(activation);
  if (submitted.jobParked ?? (await job.moveToWaitingChildren(token))) throw parked();
  await ctx.store.unpark(activation);
  await failLostChildren(ctx, activation);
}

/**
 * After the parent found no pending children, a sub-agent record still `started` means its child
 * job ended without finishing the child (it failed for good at the queue level): the child is
 * failed now, which completes the parent's record with the reason.
 */
async function failLostChildren(ctx: RunnerContext, activation: Activation): Promise<void> {
  for (const r of activation.records.values()) {
    if (r.kind !== 'subagent' || r.status !== 'started' || !r.childId) continue;
    const child = await ctx.store.readState(activation.state.rootId, r.childId);
    if (!child) {
      const error = codedError('subagent_failed', 'the child invocation is gone');
      await ctx.store.record(activation, {
        ...r,
        status: 'failed',
        finishedAt: new Date().toISOString(),
        error,
      });
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
      await ctx.store.record(activation, { ...r, ...outcome, finishedAt: new Date().toISOString() });
      continue;
    }
    const job = await Job.fromId(ctx.queues.get(r.name)!, r.childId);
    const reason = job?.failedReason ? `the child job failed: ${job.failedReason}` : 'the child job was lost';
    await ctx.store.finish(child, undefined, {
      status: 'failed',
      error: codedError('subagent_failed', reason),
    });
  }
  activation.records = await ctx.store.reloadRecords(activation);
}
