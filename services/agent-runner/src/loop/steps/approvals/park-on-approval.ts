import { DelayedError, type Job } from 'bullmq';
import type { Activation } from '../../store/activation-store.js';
import type { RunnerContext } from '../runner-context.js';

/**
 * Parks an invocation on its pending approvals (docs/guides/approvals-and-budgets.md) holding no worker slot: `waiting` is
 * recorded with the job to wake, then the job is delayed until the deadline (so the deadline fires
 * on its own) and the slot released (DelayedError). Whoever decides (or cancels) promotes the job,
 * and any runner resumes it; a decision that landed before the job was delayed is caught by
 * looking once more after it was.
 */
export async function parkOnApproval(
  ctx: RunnerContext,
  activation: Activation,
  job: Job,
  token: string,
): Promise<never> {
  await ctx.store.approvals.park(activation, job.id!);
  await job.moveToDelayed(Math.max(Date.now(), activation.state.deadline), token);
  if (!(await ctx.store.approvals.stillWaiting(activation))) await job.promote().catch(() => undefined);
  throw new DelayedError();
}
