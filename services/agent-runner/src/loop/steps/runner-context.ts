import {
  DEFAULT_MAX_CALLS_PER_TURN,
  DEFAULT_MAX_MODEL_REPLY_BYTES,
  DEFAULT_MODEL_IDLE_SECONDS,
  DEFAULT_REMOTE_REQUEST_SECONDS,
  type LoadedCodeAgent,
  type Logger,
  type MeshPlan,
  type ToolInfo,
} from '@agentmesh/shared';
import type { SessionStore } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { DeltaOutlet } from '../deltas/delta-outlet.js';
import type { Submission } from '../fast-path-ports.js';
import type { RunnerMetrics } from '../metrics.js';
import type { ChatModel } from '../model/chat-model.js';
import { DEFAULT_MODEL_RETRY } from '../model/openai-chat-model.js';
import { DEFAULT_REMOTE_WATCH_MS, type RemoteAgents } from '../remote/remote-agents.js';
import type { ActivationStore } from '../store/activation-store.js';
import type { ToolClient } from '../tools/tool-client.js';

/** Limits every activation runs under (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md, env `MESH_MAX_*`). */
export interface RunnerLimits {
  maxDepth: number;
  maxDelegationsPerTurn: number;
  maxResultBytes: number;
  maxRecoveries: number;
  /** Tool and sub-agent calls of one model reply that run; the rest fail `too_many_calls`. */
  maxCallsPerTurn: number;
  /** Bytes of a model reply body; a longer one fails the call with `invalid_model_reply`. */
  maxModelReplyBytes: number;
  /** How long one request to a remote A2A agent may take, headers and body. */
  remoteRequestMs: number;
  /** How long a remote child's activation holds its worker slot watching the remote task before it parks. */
  remoteWatchMs: number;
  /** How long a model request may receive nothing before the attempt fails (`model_timeout`). */
  modelIdleMs: number;
  /** The delay before a failed model attempt is first retried; it doubles per attempt (with jitter) up to 8 s. */
  modelRetryMs: number;
}

/** The defaults of the docs/reference/bounds.md limits, the same as serviceEnv's. */
export const DEFAULT_RUNNER_LIMITS = {
  maxCallsPerTurn: DEFAULT_MAX_CALLS_PER_TURN,
  maxModelReplyBytes: DEFAULT_MAX_MODEL_REPLY_BYTES,
  remoteRequestMs: DEFAULT_REMOTE_REQUEST_SECONDS * 1000,
  remoteWatchMs: DEFAULT_REMOTE_WATCH_MS,
  modelIdleMs: DEFAULT_MODEL_IDLE_SECONDS * 1000,
  modelRetryMs: DEFAULT_MODEL_RETRY.baseDelayMs,
} as const;

/** Limits as a runner is given them: the bounds of docs/reference/bounds.md may be left to their defaults. */
export type RunnerLimitsOptions = Omit<RunnerLimits, keyof typeof DEFAULT_RUNNER_LIMITS> &
  Partial<Pick<RunnerLimits, keyof typeof DEFAULT_RUNNER_LIMITS>>;

/** The limits a runner works with: those given, the bounds of docs/reference/bounds.md defaulted. */
export function withDefaultLimits(limits: RunnerLimitsOptions): RunnerLimits {
  return {
    ...limits,
    maxCallsPerTurn: limits.maxCallsPerTurn ?? DEFAULT_RUNNER_LIMITS.maxCallsPerTurn,
    maxModelReplyBytes: limits.maxModelReplyBytes ?? DEFAULT_RUNNER_LIMITS.maxModelReplyBytes,
    remoteRequestMs: limits.remoteRequestMs ?? DEFAULT_RUNNER_LIMITS.remoteRequestMs,
    remoteWatchMs: limits.remoteWatchMs ?? DEFAULT_RUNNER_LIMITS.remoteWatchMs,
    modelIdleMs: limits.modelIdleMs ?? DEFAULT_RUNNER_LIMITS.modelIdleMs,
    modelRetryMs: limits.modelRetryMs ?? DEFAULT_RUNNER_LIMITS.modelRetryMs,
  };
}

/** Everything an activation needs, built once per runner process. */
export interface RunnerContext {
  runnerId: string;
  plan: MeshPlan;
  store: ActivationStore;
  /** The queue of every agent (children go to theirs), by agent name. */
  queues: Map<string, Queue>;
  /**
   * With the queue fast path (MESH_QUEUE_FASTPATH on, one server): submits a delegation's children
   * with their jobs in the same writes (queue/fast-path/submit-with-jobs.ts). Resolves with
   * BullMQ's answer to the parent job's park, when it parked.
   */
  submitWithJobs?: (sub: Submission) => Promise<boolean | undefined>;
  /** Code agents' modules (their `run`), by agent name. */
  codeAgents: Record<string, LoadedCodeAgent>;
  /** Chat models by the config's model name. */
  models: Map<string, ChatModel>;
  /** Where model calls publish their deltas while their tree is watched; absent = never. */
  deltas?: DeltaOutlet;
  /** The tool catalogue by tool name. */
  catalogue: () => Map<string, ToolInfo>;
  tools: ToolClient;
  /** The config's remote agents (A2A clients, built on first use); absent when it has none. */
  remote?: RemoteAgents;
  limits: RunnerLimits;
  retentionSeconds: number;
  /** Sessions (docs/guides/sessions.md): runners advance a session after its invocation ends. */
  sessions: SessionStore;
  metrics: RunnerMetrics;
  log: Logger;
}
