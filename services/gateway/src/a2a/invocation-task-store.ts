import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { TaskStore } from '@a2a-js/sdk/server';
import type { InvocationView } from '@agentmesh/shared';
import type { Caller } from '../auth/caller.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { taskOf } from './task-of.js';

/**
 * The A2A task store of one request, backed by the invocations in Redis instead of process memory:
 * a task is read from its invocation, so any gateway answers any task (docs/guides/a2a-and-remote-agents.md). Only the
 * caller's own invocations of this agent are found. `save` writes nothing (the invocation is the
 * record), except that a task saved `canceled` cancels its invocation, as DELETE does.
 */
export class InvocationTaskStore implements TaskStore {
  constructor(
    private readonly invocations: InvocationService,
    private readonly agent: string,
    private readonly caller: Caller,
  ) {}

  async load(taskId: string): Promise<Task | undefined> {
    const view = await this.view(taskId);
    if (!view) return undefined;
    // The task's context is its session when a message's contextId started it in one (docs/guides/a2a-and-remote-agents.md).
    return taskOf(view, (await this.invocations.sessionOf(view.id)) ?? view.id);
  }

  /** The invocation of a task the caller may see, of this agent; undefined for any other. */
  async view(taskId: string): Promise<InvocationView | undefined> {
    const view = await this.invocations.viewFor(taskId, this.caller);
    return view && view.agent === this.agent ? view : undefined;
  }

  async save(task: Task): Promise<void> {
    if (task.status?.state === 5) await this.invocations.cancel(task.id, this.caller);
  }

  async list(_params: ListTasksRequest): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError('ListTasks is not offered: use GET /invocations.');
  }
}
