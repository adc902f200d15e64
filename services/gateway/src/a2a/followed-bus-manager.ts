import {
  DefaultExecutionEventBus,
  DefaultExecutionEventBusManager,
  type ExecutionEventBus,
} from '@a2a-js/sdk/server';
import { isInvocationId, isTerminal } from '@agentmesh/shared';
import type { TreeStreams } from '../events/tree-streams.js';
import { streamAnswer } from './answer-chunks.js';
import { type FollowDeps, followInvocation } from './follow-invocation.js';
import type { InvocationTaskStore } from './invocation-task-store.js';
import type { SubscriptionAwareBuses } from './mesh-request-handler.js';

/** What a subscription needs to stream a task's answer: the tree streams, and the caller's tasks. */
export interface SubscriptionAnswerDeps {
  streams: TreeStreams;
  tasks: Pick<InvocationTaskStore, 'view'>;
}

/**
 * The event buses of one A2A request. A new task's bus is the SDK's own; the bus of an existing
 * task (SubscribeToTask, CancelTask) is fed from its invocation in Redis (followInvocation), so
 * any gateway can follow or cancel a task another one started. For SubscribeToTask (`streaming`)
 * the bus also carries the root's answer in chunks from now on, as SendStreamingMessage's does
 * (streamAnswer, docs/guides/streaming.md#a2a). Fed buses stop with `signal` (the request's end).
 */
export class FollowedBusManager implements SubscriptionAwareBuses {
  /** Set by the request handler for SubscribeToTask. */
  streaming = false;
  private readonly own = new DefaultExecutionEventBusManager();
  private readonly followed = new Map<string, ExecutionEventBus>();

  constructor(
    private readonly deps: FollowDeps,
    private readonly signal: AbortSignal,
    private readonly answers: SubscriptionAnswerDeps,
  ) {}

  createOrGetByTaskId(taskId: string): ExecutionEventBus {
    return this.followed.get(taskId) ?? this.own.createOrGetByTaskId(taskId);
  }

  getByTaskId(taskId: string): ExecutionEventBus | undefined {
    const mine = this.own.getByTaskId(taskId) ?? this.followed.get(taskId);
    if (mine || !isInvocationId(taskId)) return mine;
    const bus = new DefaultExecutionEventBus();
    this.followed.set(taskId, bus);
    // Started on the next tick, once the SDK has attached its listeners.
    setImmediate(() => void this.follow(taskId, bus).catch(() => bus.finished()));
    return bus;
  }

  cleanupByTaskId(taskId: string): void {
    this.own.cleanupByTaskId(taskId);
    this.followed.delete(taskId);
  }

  /** Feeds `bus` from the task's invocation; a subscription's with its answer's chunks too. */
  private async follow(taskId: string, bus: ExecutionEventBus): Promise<void> {
    // Only a task the caller may see, still running: the SDK refuses any other subscription.
    const view = this.streaming ? await this.answers.tasks.view(taskId) : undefined;
    const answer =
      view && !isTerminal(view.status)
        ? await streamAnswer({ streams: this.answers.streams, signal: this.signal }, view, taskId, false, bus)
        : undefined;
    await followInvocation(this.deps, taskId, bus, this.signal, taskId, answer);
  }
}
