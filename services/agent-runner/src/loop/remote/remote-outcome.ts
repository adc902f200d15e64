import { type Message, type Part, type Task, TaskState } from '@a2a-js/sdk';
import { type AgentPlan, type CodedError, codedError, compileSchema } from '@agentmesh/shared';

/** Where a remote task stands for its child invocation: still going, or its end. */
export type RemoteOutcome =
  | { kind: 'pending' }
  | { kind: 'succeeded'; output: unknown }
  | { kind: 'failed'; error: CodedError };

/** A remote outcome that ends the child. */
export type SettledOutcome = Exclude<RemoteOutcome, { kind: 'pending' }>;

const FAILED = new Set([TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED]);

/**
 * The outcome of a remote task (docs/guides/a2a-and-remote-agents.md states): completed → the artifact's answer; failed or
 * rejected → a failed delegation with the remote's reason; canceled (by the remote side: ours is
 * finished before we ask) → failed; submitted, working, input- or auth-required → pending (a
 * remote approval may still be decided there; the deadline bounds the wait).
 */
export function remoteOutcome(agent: AgentPlan, task: Task): RemoteOutcome {
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  if (state === TaskState.TASK_STATE_COMPLETED)
    return answerOf(
      agent,
      task.artifacts.flatMap((a) => a.parts),
    );
  if (FAILED.has(state) || state === TaskState.TASK_STATE_CANCELED) {
    const reason = textOf(task.status?.message?.parts ?? []);
    const how = state === TaskState.TASK_STATE_CANCELED ? 'was canceled' : 'failed';
    const message = `the remote agent's task ${how}${reason ? `: ${reason}` : ''}`;
    return { kind: 'failed', error: codedError('subagent_failed', message.slice(0, 4000)) };
  }
  return { kind: 'pending' };
}

/** The outcome of a remote agent that answered with a message instead of a task. */
export function messageOutcome(agent: AgentPlan, message: Message): SettledOutcome {
  return answerOf(agent, message.parts);
}

/**
 * The child's output from the answer's parts: with a declared output schema, the data part (or
 * the text, parsed as JSON) that matches it, else `invalid_output`; without one, the text.
 */
function answerOf(agent: AgentPlan, parts: Part[]): SettledOutcome {
  const text = textOf(parts);
  if (!agent.outputSchema) return { kind: 'succeeded', output: text };
  const valid = compileSchema(agent.outputSchema);
  const data = parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value as unknown] : []));
  for (const candidate of [...data, parsed(text)]) {
    if (candidate !== undefined && valid(candidate).ok) return { kind: 'succeeded', output: candidate };
  }
  const error = codedError(
    'invalid_output',
    "The remote agent's answer does not match its declared output schema.",
  );
  return { kind: 'failed', error };
}

function textOf(parts: Part[]): string {
  return parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n');
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
