import type {
  AgentCard,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
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

/** The executor of the request: told the session the client's message names, if any. */
export interface SessionAwareExecutor extends AgentExecutor {
  /** The session the message continues: its `contextId` as the client sent it (docs/guides/a2a-and-remote-agents.md, docs/guides/sessions.md). */
  session: string | undefined;
  /** The request is SendStreamingMessage: the root's answer goes out in chunks as it is written. */
  streaming: boolean;
}

/** The event buses of the request: told when it is SubscribeToTask. */
export interface SubscriptionAwareBuses extends ExecutionEventBusManager {
  /** The request is SubscribeToTask: a followed task's answer goes out in chunks as it is written. */
  streaming: boolean;
}

/**
 * The SDK's DefaultRequestHandler, checking a message's input against the agent's schema before
 * anything starts: bad input is a JSON-RPC error (-32602) rather than a failed task. What the SDK
 * would add to a message is kept from the mesh: a `contextId` it makes up for a message without
 * one names no session (only the client's own does), and `referenceTaskIds` are dropped unread
 * (the SDK loads every task they name and keeps it for the request: 1,500 references to one large
 * task took the gateway's heap; the mesh never uses them).
 */
export class MeshRequestHandler extends DefaultRequestHandler {
  constructor(
    private readonly agent: AgentPlan,
    card: AgentCard,
    store: TaskStore,
    private readonly executor: SessionAwareExecutor,
    private readonly buses: SubscriptionAwareBuses,
  ) {
    super(card, store, executor, buses);
  }

  override async sendMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<Message | Task> {
    return super.sendMessage(this.admit(params), context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const admitted = this.admit(params);
    this.executor.streaming = true;
    yield* super.sendMessageStream(admitted, context);
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.buses.streaming = true;
    yield* super.resubscribe(params, context);
  }

  /** Checks a message and notes its session; answers it without references to other tasks. */
  private admit(params: SendMessageRequest): SendMessageRequest {
    inputOf(this.agent, params.message);
    this.executor.session = sessionOfContext(params.message?.contextId);
    if (!params.message?.referenceTaskIds?.length) return params;
    return { ...params, message: { ...params.message, referenceTaskIds: [] } };
  }
}
