import {
  DefaultExecutionEventBus,
  DefaultExecutionEventBusManager,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
} from '@a2a-js/sdk/server';
import { isInvocationId } from '@agentmesh/shared';
import { type FollowDeps, followInvocation } from './follow-invocation.js';

/**
 * The event buses of one A2A request. A new task's bus is the SDK's own; the bus of an existing
 * task (SubscribeToTask, CancelTask) is fed from its invocation in Redis (followInvocation), so
 * any gateway can follow or cancel a task another one started. Fed buses stop with `signal`
 * (the request's end).
 */
export class FollowedBusManager implements ExecutionEventBusManager {
  private readonly own = new DefaultExecutionEventBusManager();
  private readonly followed = new Map<string, ExecutionEventBus>();

  constructor(
    private readonly deps: FollowDeps,
    private readonly signal: AbortSignal,
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
    setImmediate(
      () => void followInvocation(this.deps, taskId, bus, this.signal).catch(() => bus.finished()),
    );
    return bus;
  }

  cleanupByTaskId(taskId: string): void {
    this.own.cleanupByTaskId(taskId);
    this.followed.delete(taskId);
  }
}
