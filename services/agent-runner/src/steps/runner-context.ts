import type { LoadedCodeAgent, Logger, MeshPlan, ToolInfo } from '@agentmesh/shared';
import type { Queue } from 'bullmq';
import type { RunnerMetrics } from '../metrics.js';
import type { ChatModel } from '../model/chat-model.js';
import type { ActivationStore } from '../store/activation-store.js';
import type { ToolClient } from '../tools/tool-client.js';

/** Limits every activation runs under (DESIGN §7, env `MESH_MAX_*`). */
export interface RunnerLimits {
  maxDepth: number;
  maxDelegationsPerTurn: number;
  maxResultBytes: number;
  maxRecoveries: number;
}

/** Everything an activation needs, built once per runner process. */
export interface RunnerContext {
  runnerId: string;
  plan: MeshPlan;
  store: ActivationStore;
  /** The queue of every agent (children go to theirs), by agent name. */
  queues: Map<string, Queue>;
  /** Code agents' modules (their `run`), by agent name. */
  codeAgents: Record<string, LoadedCodeAgent>;
  /** Chat models by the config's model name. */
  models: Map<string, ChatModel>;
  /** The tool catalogue by tool name. */
  catalogue: () => Map<string, ToolInfo>;
  tools: ToolClient;
  limits: RunnerLimits;
  retentionSeconds: number;
  metrics: RunnerMetrics;
  log: Logger;
}
