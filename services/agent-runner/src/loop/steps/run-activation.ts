import {
  type AgentPlan,
  type CodedError,
  codedError,
  isMeshError,
  type JobData,
  modelCallId,
} from '@agentmesh/shared';
import { type Job, UnrecoverableError } from 'bullmq';
import type { ReactStart, TakenActivation } from '../fast-path-ports.js';
import { logSystemFault, RequeueError } from '../job-errors.js';
import { agentLabel } from '../metrics.js';
import { settleRunnerSession } from '../sessions/settle-runner-session.js';
import { type Activation, FencedOutError } from '../store/activation-store.js';
import { traceActivation } from '../tracing.js';
import type { AgentRun } from './agent-run.js';
import { checkChildInput } from './check-child-input.js';
import { runCodeAgent } from './code-agent/run-code-agent.js';
import { finishFailed } from './finish-invocation.js';
import { runReactAgent } from './react/run-react-agent.js';
import type { RunnerContext } from './runner-context.js';

/** Remote agents' runs, on the A2A SDK: loaded with the first remote activation (RemoteAgents). */
const remoteRuns = () => import('../remote/run-remote-agent.js');

/**
 * One activation of an invocation: takes a new epoch, refuses what must not run, and hands the
 * agent to its runner (the ReAct loop or a code agent) until the invocation finishes or parks on
 * its children (then the worker slot is released by throwing WaitingChildrenError, and any runner
 * resumes it later). Cancellation, fencing and requeueing end every kind of agent the same way.
 * `taken` is the activation the take of the job made already (take-activation.ts), if it did;
 * `late` when the job then waited for a slot.
 */
export async function runActivation(
  ctx: RunnerContext,
  job: Job<JobData>,
  token: string,
  signal: AbortSignal,
  taken?: { reply: TakenActivation; late: boolean },
): Promise<void> {
  const data = job.data;
  if (data?.v !== 1)
    throw new UnrecoverableError(`job ${job.id} carries data of unknown version ${String(data?.v)}`);
  // Inside its `activation` span: every call and log line of it hangs there (docs/reference/traces.md), the line
  // of a system fault included (the worker then settles the job: settleJobError).
  return traceActivation(data, ctx.runnerId, () =>
    activate(ctx, job, data, token, signal, taken).catch((e: unknown) => {
      logSystemFault(e, job, ctx.log);
      throw e;
    }),
  );
}

async function activate(
  ctx: RunnerContext,
  job: Job<JobData>,
  data: JobData,
  token: string,
  signal: AbortSignal,
  taken: { reply: TakenActivation; late: boolean } | undefined,
): Promise<void> {
  const activation =
    taken === undefined
      ? await ctx.store.activate(data.invocationId, data.rootId, ctx.runnerId, activationStart(ctx, data))
      : ctx.store.taken(taken.reply);
  // Activated before it waited for a slot (a take that raced another for the last one): its model
  // call is recorded `started` again when it goes out, so the cancel flag and the budget are
  // checked right before the call, as always (docs/architecture/durability-and-fencing.md).
  if (activation && taken?.late) activation.prestarted = undefined;
  if (!activation) return; // gone: nothing to do
  // Terminal already: only its session may still need to advance (its runner died before it).
  if (activation.epoch === 0) return settleRunnerSession(ctx, activation.state);
  // Read in the same step: its first model call need not ask again (WatchCheck). Not when it then
  // waited for a slot: that answer may be old by now.
  if (!taken?.late) ctx.deltas?.watch.seed(activation.state.rootId, activation.watched);
  await ctx.store.readTexts(activation);
  const log = {
    agent: activation.state.agent,
    invocationId: activation.state.id,
    rootId: activation.state.rootId,
  };
  if (activation.epoch === 1) ctx.log.info(log, 'invocation started'); // its first activation
  if (activation.recovered) {
    ctx.metrics.recoveries.inc({ agent: agentLabel(ctx.plan, activation.state.agent) });
    ctx.log.warn(log, 'taking over an invocation whose runner stopped mid-flight');
  }
  const agent = ctx.plan.agents[activation.state.agent];
  const refusal = refuse(ctx, agent, activation);
  if (refusal) {
    // A remote child's task lives on another mesh: it ends with the child (docs/guides/a2a-and-remote-agents.md).
    if (agent?.kind === 'remote' && ctx.remote)
      await (await remoteRuns()).cancelRemoteTask({ ctx, agent, activation }, ctx.remote);
    return finishFailed(ctx, activation, refusal.error, refusal.status);
  }
  if (!agent) return;
  try {
    const code = ctx.codeAgents[agent.name];
    const run: AgentRun = { ctx, agent, activation, job, token, signal };
    if (agent.kind === 'remote' && ctx.remote) await (await remoteRuns()).runRemoteAgent(run, ctx.remote);
    else if (agent.kind === 'code' && code) await runCodeAgent(run, code);
    else await runReactAgent(run);
  } catch (e) {
    if (isMeshError(e, 'cancelled'))
      return finishFailed(ctx, activation, codedError('cancelled', e.message), 'cancelled');
    if (e instanceof FencedOutError) return ctx.log.warn(log, e.message);
    if (e instanceof RequeueError) await ctx.store.requeue(activation).catch(() => undefined);
    throw e;
  }
}

/**
 * What ACTIVATE needs to record a ReAct agent's first model call `started` (see ACTIVATE): not for
 * code and remote agents, nor an agent this runner does not know.
 */
export function reactStart(ctx: RunnerContext, name: string): ReactStart | undefined {
  const agent = ctx.plan.agents[name];
  if (agent?.kind !== 'react' || ctx.codeAgents[agent.name]) return undefined;
  return {
    firstCallId: modelCallId(0),
    model: agent.model ?? '',
    defHash: agent.definitionHash,
    inputSchema: agent.inputSchema !== undefined,
  };
}

/**
 * ACTIVATE's ReAct arguments for a job. A child checks its input first (refuse() may fail it before
 * any call), so its call is recorded so only when its parent checked that input already.
 */
function activationStart(
  ctx: RunnerContext,
  data: JobData,
): { firstCallId: string; model: string; defHash: string; child: boolean } | undefined {
  const start = reactStart(ctx, data.agent);
  return start && { ...start, child: data.invocationId !== data.rootId && start.inputSchema };
}

/** Why an activation must not run the loop: a changed plan, too many crashes, a bad input… */
function refuse(
  ctx: RunnerContext,
  agent: AgentPlan | undefined,
  activation: Activation,
): { error: CodedError; status?: 'cancelled' } | undefined {
  const s = activation.state;
  if (s.cancelRequested) return { error: codedError('cancelled'), status: 'cancelled' };
  if (!agent) return { error: codedError('agent_not_found', `This runner has no agent named ${s.agent}.`) };
  if (s.defHash !== agent.definitionHash) {
    return {
      error: codedError(
        'plan_changed',
        `The definition of agent ${s.agent} changed while the invocation was in flight.`,
      ),
    };
  }
  if (s.recoveries > ctx.limits.maxRecoveries) {
    return {
      error: codedError(
        'too_many_recoveries',
        `The invocation was recovered after a crash ${s.recoveries} times (limit ${ctx.limits.maxRecoveries}).`,
      ),
    };
  }
  if (activation.records.size === 0 && s.parentId && agent.inputSchema)
    return checkChildInput(agent, s.input);
  return undefined;
}
