import { type Artifact, type Part, type Task, TaskState } from '@a2a-js/sdk';
import type { InvocationView } from '@agentmesh/shared';

const STATES: Record<string, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  waiting: TaskState.TASK_STATE_WORKING,
  succeeded: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

/**
 * The A2A task state of an invocation status (docs/guides/a2a-and-remote-agents.md); waiting on its own approvals (docs/guides/approvals-and-budgets.md)
 * is `input-required`.
 */
export const stateOf = (status: string, awaitingApproval = false): TaskState =>
  status === 'waiting' && awaitingApproval
    ? TaskState.TASK_STATE_INPUT_REQUIRED
    : (STATES[status] ?? TaskState.TASK_STATE_WORKING);

const part = (content: Part['content']): Part => ({
  content,
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/** A succeeded invocation's answer as the task's artifact: a text part, plus a data part for structured output. */
export function artifactOf(view: InvocationView): Artifact | undefined {
  if (view.status !== 'succeeded') return undefined;
  const out = view.output;
  const parts =
    typeof out === 'string'
      ? [part({ $case: 'text', value: out })]
      : [
          part({ $case: 'text', value: JSON.stringify(out ?? null) }),
          part({ $case: 'data', value: out ?? null }),
        ];
  return outputArtifact(view, parts);
}

/** The task's `output` artifact with these parts (one artifact id per task: chunks of it replace or extend it). */
export function outputArtifact(view: Pick<InvocationView, 'id' | 'agent'>, parts: Part[]): Artifact {
  return {
    artifactId: `${view.id}-output`,
    name: 'output',
    description: `The output of agent ${view.agent}.`,
    parts,
    metadata: undefined,
    extensions: [],
  };
}

/** A text part. */
export const textPart = (value: string): Part => part({ $case: 'text', value });

/** An invocation as an A2A task: its id is the invocation id, a failure's reason in the status message. */
export function taskOf(view: InvocationView, contextId: string = view.id): Task {
  const artifact = artifactOf(view);
  const reason = view.error ? `${view.error.code}: ${view.error.message}` : undefined;
  return {
    id: view.id,
    contextId,
    status: {
      state: stateOf(view.status, view.pendingApprovals.length > 0),
      message:
        reason === undefined
          ? undefined
          : {
              messageId: `${view.id}-status`,
              contextId,
              taskId: view.id,
              role: 2,
              parts: [part({ $case: 'text', value: reason })],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            },
      timestamp: new Date().toISOString(),
    },
    artifacts: artifact ? [artifact] : [],
    history: [],
    metadata: { agent: view.agent, invocationStatus: view.status },
  };
}
