import { type InvocationState, JOB_RETRY, type JobData } from '@agentmesh/shared';
import { settleSession } from '@agentmesh/shared/redis';
import type { RunnerContext } from '../steps/runner-context.js';

/**
 * Advances a root invocation's session once it has ended (docs/guides/sessions.md): its exchange is appended
 * and the next queued invocation of the session gets its job. Called after the finish step and by
 * an activation that finds its invocation terminal already (the job of a runner killed between the
 * two comes back to some runner): settling is idempotent. A failure here is logged, never thrown:
 * the invocation has ended, and the next gateway or runner to touch the session settles it.
 */
export async function settleRunnerSession(ctx: RunnerContext, state: InvocationState): Promise<void> {
  if (!state.session || state.parentId) return;
  try {
    await settleSession(ctx.sessions, state.session, {
      agent: (name) => ctx.plan.agents[name],
      start: async (agent, id, traceparent) => {
        const queue = ctx.queues.get(agent);
        if (!queue) return;
        const data: JobData = { v: 1, invocationId: id, rootId: id, agent };
        if (traceparent) data.traceparent = traceparent;
        await queue.add(agent, data, {
          jobId: id,
          ...JOB_RETRY,
          removeOnComplete: { age: ctx.retentionSeconds },
          removeOnFail: { age: ctx.retentionSeconds },
        });
      },
    });
  } catch (e) {
    ctx.log.warn(
      { invocationId: state.id, session: state.session, err: (e as Error).message },
      'session advance failed; the next gateway or runner to touch the session settles it',
    );
  }
}
