import {
  type AgentPlan,
  boundedValidation,
  DEFAULT_INPUT_SCHEMA,
  decideNextStep,
  isMeshError,
  type JobData,
  type PlannedCall,
} from '@agentmesh/shared';
import { type Job, UnrecoverableError } from 'bullmq';
import { HandBackError } from '../job-errors.js';
import { agentLabel } from '../metrics.js';
import { type Activation, FencedOutError } from '../store/activation-store.js';
import { callModel } from './call-model.js';
import { parkOnChildren, submitDelegations } from './delegate.js';
import { finishFailed, finishSucceeded } from './finish-invocation.js';
import { runCodeAgent } from './run-code-agent.js';
import { recordFailedCalls, runTools } from './run-tools.js';
import type { RunnerContext } from './runner-context.js';

type Runnable = Extract<PlannedCall, { args: Record<string, unknown> }>;

/**
 * One activation of an invocation: takes a new epoch, replays what is recorded, and runs the
 * ReAct loop until the invocation finishes or parks on its children (then the worker slot is
 * released by throwing WaitingChildrenError, and any runner resumes it later).
 */
export async function runActivation(
  ctx: RunnerContext,
  job: Job<JobData>,
  token: string,
  signal: AbortSignal,
): Promise<void> {
  const data = job.data;
  if (data?.v !== 1)
    throw new UnrecoverableError(`job ${job.id} carries data of unknown version ${String(data?.v)}`);
  const a = await ctx.store.activate(data.invocationId, data.rootId, ctx.runnerId);
  if (!a || a.epoch === 0) return; // gone, or terminal already: nothing to do
  const log = { agent: a.state.agent, invocationId: a.state.id, rootId: a.state.rootId };
  if (a.epoch === 1) ctx.log.info(log, 'invocation started'); // its first activation
  if (a.recovered) {
    ctx.metrics.recoveries.inc({ agent: agentLabel(ctx.plan, a.state.agent) });
    ctx.log.warn(log, 'taking over an invocation whose runner stopped mid-flight');
  }
  const agent = ctx.plan.agents[a.state.agent];
  const refusal = refuse(ctx, agent, a);
  if (refusal) return finishFailed(ctx, a, refusal.error, refusal.status);
  if (!agent) return;
  try {
    const code = ctx.codeAgents[agent.name];
    if (agent.kind === 'code' && code) await runCodeAgent(ctx, agent, code, a, job, token, signal);
    else await loop(ctx, agent, a, job, token, signal);
  } catch (e) {
    if (isMeshError(e, 'cancelled'))
      return finishFailed(ctx, a, { code: 'cancelled', message: e.message }, 'cancelled');
    if (e instanceof FencedOutError) return ctx.log.warn(log, e.message);
    if (e instanceof HandBackError) await ctx.store.park(a, 'queued').catch(() => undefined);
    throw e;
  }
}

async function loop(
  ctx: RunnerContext,
  agent: AgentPlan,
  a: Activation,
  job: Job<JobData>,
  token: string,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    if (Date.now() >= a.state.deadline) {
      return finishFailed(ctx, a, {
        code: 'deadline_exceeded',
        message: 'The invocation ran past its deadline.',
      });
    }
    const step = decideNextStep(agent, a.records, {
      depth: a.state.depth,
      maxDepth: ctx.limits.maxDepth,
      maxDelegationsPerTurn: ctx.limits.maxDelegationsPerTurn,
      maxCallsPerTurn: ctx.limits.maxCallsPerTurn,
    });
    if (step.type === 'final') return finishSucceeded(ctx, agent, a, step.output);
    if (step.type === 'fail') return finishFailed(ctx, a, step.error);
    if (step.type === 'call_model') {
      const error = await callModel(ctx, agent, a, step.turn, step.callId, signal);
      if (error) return finishFailed(ctx, a, error);
      continue;
    }
    const runnable = step.calls.filter((c): c is Runnable => 'args' in c);
    const delegations = runnable.filter((c) => c.kind === 'subagent');
    // A turn of delegations only parks in the round trip that submits them.
    const parked = await submitDelegations(ctx, job, a, delegations, {
      park: delegations.length === step.calls.length,
    });
    await recordFailedCalls(ctx, a, step.calls);
    await runTools(
      ctx,
      a,
      runnable.filter((c) => c.kind === 'tool'),
      signal,
    );
    if (delegations.length === 0) continue;
    await parkOnChildren(ctx, a, job, token, parked);
  }
}

/** Why an activation must not run the loop: a changed plan, too many crashes, a bad input… */
function refuse(
  ctx: RunnerContext,
  agent: AgentPlan | undefined,
  a: Activation,
): { error: { code: string; message: string }; status?: 'cancelled' } | undefined {
  const s = a.state;
  if (s.cancelRequested)
    return { error: { code: 'cancelled', message: 'The invocation was cancelled.' }, status: 'cancelled' };
  if (!agent)
    return { error: { code: 'agent_not_found', message: `This runner has no agent named ${s.agent}.` } };
  if (s.defHash !== agent.definitionHash) {
    return {
      error: {
        code: 'plan_changed',
        message: `The definition of agent ${s.agent} changed while the invocation was in flight.`,
      },
    };
  }
  if (s.recoveries > ctx.limits.maxRecoveries) {
    return {
      error: {
        code: 'too_many_recoveries',
        message: `The invocation was recovered after a crash ${s.recoveries} times (limit ${ctx.limits.maxRecoveries}).`,
      },
    };
  }
  if (a.records.size === 0 && s.parentId && agent.inputSchema) return checkChildInput(agent, s.input);
  return undefined;
}

/** A ReAct child validates its input; an invalid one is a child failure that never calls the model. */
function checkChildInput(agent: AgentPlan, input: unknown) {
  // The input is the parent model's arguments: judged with work bounded by their size.
  const problems = boundedValidation(agent.inputSchema!, input, JSON.stringify(input ?? null).length);
  if (problems === undefined) return undefined;
  const isDefault = JSON.stringify(agent.inputSchema) === JSON.stringify(DEFAULT_INPUT_SCHEMA);
  const message = isDefault
    ? "ReAct sub-agent input must be an object containing only a string 'prompt'."
    : `Invalid input: ${problems}`;
  return { error: { code: 'invalid_input', message } };
}
