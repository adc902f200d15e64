import type { AgentPlan, JobData } from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../store/activation-store.js';
import type { RunnerContext } from './runner-context.js';

/** One activation of one agent, as the dispatcher hands it to the ReAct loop or a code agent. */
export interface AgentRun {
  ctx: RunnerContext;
  agent: AgentPlan;
  activation: Activation;
  /** The activation's BullMQ job (children are added under it) and the lock token it holds. */
  job: Job<JobData>;
  token: string;
  /** Aborted when the invocation is cancelled or the runner stops. */
  signal: AbortSignal;
}
