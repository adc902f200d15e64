import { createHash } from 'node:crypto';
import { type Part, Role, type SendMessageRequest } from '@a2a-js/sdk';
import { type AgentPlan, DEFAULT_INPUT_SCHEMA } from '@agentmesh/shared';

const part = (content: Part['content']): Part => ({
  content,
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/**
 * The message id of a child invocation's one message to its remote agent: derived from the
 * invocation id, so a runner that crashed between sending and recording the task sends the same
 * id again, and a mesh gateway answers it with the task it already started.
 */
export function remoteMessageId(invocationId: string): string {
  return `mesh-${createHash('sha256').update(`a2a-message/${invocationId}`).digest('hex').slice(0, 32)}`;
}

/**
 * The SendMessage request of a child invocation (docs/guides/a2a-and-remote-agents.md): the prompt as a text part when the
 * agent has the default prompt schema, else the input as a data part; not blocking (the runner
 * records the task id before it waits).
 */
export function remoteMessage(agent: AgentPlan, invocationId: string, input: unknown): SendMessageRequest {
  const isPrompt = JSON.stringify(agent.inputSchema) === JSON.stringify(DEFAULT_INPUT_SCHEMA);
  const prompt = (input as { prompt?: unknown } | null)?.prompt;
  const content: Part['content'] =
    isPrompt && typeof prompt === 'string'
      ? { $case: 'text', value: prompt }
      : { $case: 'data', value: (input ?? null) as never };
  return {
    tenant: '',
    message: {
      messageId: remoteMessageId(invocationId),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [part(content)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: ['text/plain', 'application/json'],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: true,
    },
    metadata: undefined,
  };
}
