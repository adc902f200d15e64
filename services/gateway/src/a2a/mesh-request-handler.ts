import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBusManager,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import type { AgentPlan } from '@agentmesh/shared';
import { inputOf } from './input-of.js';
import { sessionOfContext } from './session-of-context.js';

/**
 * The SDK's DefaultRequestHandler, checking a message's input against the agent's schema before
 * anything starts: bad input is a JSON-RPC error (-32602) rather than a failed task.
 */
export class MeshRequestHandler extends DefaultRequestHandler {
  constructor(
    private readonly agent: AgentPlan,
    card: AgentCard,
    store: TaskStore,
    executor: AgentExecutor,
    buses: ExecutionEventBusManager,
  ) {
    super(card, store, executor, buses);
  }

  override async sendMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<Message | Task> {
    inputOf(this.agent, params.message);
    sessionOfContext(params.message?.contextId);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    inputOf(this.agent, params.message);
    sessionOfContext(params.message?.contextId);
    yield* super.sendMessageStream(params, context);
  }
}
