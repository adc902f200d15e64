import { type AgentPlan, EVENT_LOOP_SAMPLE_MS, type MeshPlan } from '@agentmesh/shared';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The label of every name a metric does not know: a hostile model invents names without end. */
export const UNKNOWN_LABEL = 'unknown';

/** A tool's metric label: its name when the agent declares it, else `unknown` (docs/reference/bounds.md). */
export function toolLabel(agent: AgentPlan | undefined, tool: string): string {
  return agent?.tools.includes(tool) ? tool : UNKNOWN_LABEL;
}

/** An agent's (or a sub-agent's) metric label: its name when the plan has it, else `unknown`. */
export function agentLabel(plan: MeshPlan, agent: string | undefined): string {
  return agent !== undefined && Object.hasOwn(plan.agents, agent) ? agent : UNKNOWN_LABEL;
}

/** The Prometheus metrics of one runner process (docs/reference/metrics.md). */
export function runnerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
  return {
    registry,
    invocations: new Counter({
      name: 'mesh_invocations_total',
      help: 'Invocations finished by this runner, by agent and terminal status.',
      labelNames: ['agent', 'status'],
      registers: [registry],
    }),
    invocationSeconds: new Histogram({
      name: 'mesh_invocation_seconds',
      help: 'Time from an invocation being created (queueing included) to its end, by agent and terminal status.',
      labelNames: ['agent', 'status'],
      // Longer than a call's: an invocation holds several turns, tool calls and delegations.
      buckets: [...buckets, 300, 600, 1800, 3600],
      registers: [registry],
    }),
    modelCalls: new Counter({
      name: 'mesh_model_calls_total',
      help: 'Model calls, by agent and outcome.',
      labelNames: ['agent', 'outcome'],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'mesh_tokens_total',
      help: "Tokens of the model calls' replies as the model counted them, by agent and kind (prompt, completion).",
      labelNames: ['agent', 'kind'],
      registers: [registry],
    }),
    modelSeconds: new Histogram({
      name: 'mesh_model_call_seconds',
      help: 'Model call latency, retries included.',
      labelNames: ['agent'],
      buckets,
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: 'mesh_tool_calls_total',
      help: 'Tool calls, by agent, tool and outcome.',
      labelNames: ['agent', 'tool', 'outcome'],
      registers: [registry],
    }),
    toolSeconds: new Histogram({
      name: 'mesh_tool_call_seconds',
      help: 'Tool call latency.',
      labelNames: ['agent', 'tool'],
      buckets,
      registers: [registry],
    }),
    delegations: new Counter({
      name: 'mesh_delegations_total',
      help: 'Delegations by parent agent and registered sub-agent name: started, succeeded, failed.',
      labelNames: ['agent', 'subagent', 'outcome'],
      registers: [registry],
    }),
    delegationSeconds: new Histogram({
      name: 'mesh_delegation_seconds',
      help: 'Time from submitting a delegation to the child finishing, by registered sub-agent name.',
      labelNames: ['agent', 'subagent'],
      buckets,
      registers: [registry],
    }),
    slotsInUse: new Gauge({
      name: 'mesh_runner_slots_in_use',
      help: 'Jobs this runner is working on now.',
      registers: [registry],
    }),
    recoveries: new Counter({
      name: 'mesh_recoveries_total',
      help: 'Activations that took over an invocation abandoned by a crashed runner.',
      labelNames: ['agent'],
      registers: [registry],
    }),
    reclaimedJobs: new Counter({
      name: 'mesh_reclaimed_jobs_total',
      help: 'Jobs this runner moved back to their queues because the runner holding them had no Redis connection left.',
      registers: [registry],
    }),
  };
}

/** The metrics object a runner records into. */
export type RunnerMetrics = ReturnType<typeof runnerMetrics>;
