// A remote child's A2A calls (src/loop/remote/), as pure functions: which failures are retried,
// and what a remote task's end means for the child invocation. Against servers and streams:
// remote-remote-fetch.test.ts and remote-watch-remote-task.test.ts.
import { type Part, type Task, TaskState } from '@a2a-js/sdk';
import type { AgentPlan } from '@agentmesh/shared';
import t from 'tap';
import { RemoteError, toRemoteError } from '../src/loop/remote/remote-error.js';
import { messageOutcome, remoteOutcome } from '../src/loop/remote/remote-outcome.js';

// What a failed A2A call means for a remote child: the network, 408/409/429/5xx and JSON-RPC
// internal errors are retried within the deadline; whatever else the remote said is final.
t.test('toRemoteError', async (t) => {
  t.test('an unreachable remote, a busy one and an internal error are transient', async (t) => {
    t.equal(toRemoteError(new TypeError('fetch failed')).transient, true, 'connection refused');
    t.equal(
      toRemoteError(new Error('HTTP error for SendMessage! Status: 503 Service Unavailable.')).transient,
      true,
    );
    t.equal(
      toRemoteError(new Error('agent card at http://b/card: Status: 429 Too Many Requests')).transient,
      true,
    );
    t.equal(toRemoteError(Object.assign(new Error('Internal error'), { code: -32603 })).transient, true);
    const timeout = new Error('timed out');
    timeout.name = 'TimeoutError';
    t.equal(toRemoteError(timeout).transient, true);
  });

  t.test('bad input, an unknown task and a refused key are final', async (t) => {
    t.equal(
      toRemoteError(Object.assign(new Error('invalid_input: /prompt'), { code: -32602 })).transient,
      false,
    );
    t.equal(toRemoteError(Object.assign(new Error('Task not found'), { code: -32001 })).transient, false);
    t.equal(
      toRemoteError(new Error('HTTP error for SendMessage! Status: 401 Unauthorized.')).transient,
      false,
    );
    t.equal(toRemoteError(new Error('Status: 4011')).transient, false, 'a status is a whole number');
  });

  t.test('a RemoteError stays as it is, and a long message is cut', async (t) => {
    const e = new RemoteError('x', true);
    t.equal(toRemoteError(e), e);
    t.equal(toRemoteError(new Error('y'.repeat(5000))).message.length, 2000);
  });
});

// The end of a remote task as its child invocation's end (docs/guides/a2a-and-remote-agents.md): the artifact's text, or the
// data part matching a declared output schema; the remote's failure with its reason; every state
// that is not terminal keeps the child waiting.
t.test('remoteOutcome and messageOutcome', async (t) => {
  const agent = (outputSchema: AgentPlan['outputSchema'] = null) =>
    ({ name: 'helper', outputSchema }) as AgentPlan;
  const text = (value: string): Part => ({
    content: { $case: 'text', value },
    metadata: undefined,
    filename: '',
    mediaType: '',
  });
  const data = (value: unknown): Part => ({
    content: { $case: 'data', value: value as never },
    metadata: undefined,
    filename: '',
    mediaType: '',
  });
  const task = (state: TaskState, parts: Part[] = [], reason?: string): Task =>
    ({
      id: 'task-1',
      contextId: 'c',
      status: {
        state,
        message: reason === undefined ? undefined : { messageId: 'm', role: 2, parts: [text(reason)] },
        timestamp: undefined,
      },
      artifacts: parts.length ? [{ artifactId: 'a', name: 'output', parts }] : [],
      history: [],
    }) as unknown as Task;

  const answer = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

  t.test('a completed task is the text of its artifact', async (t) => {
    t.strictSame(remoteOutcome(agent(), task(TaskState.TASK_STATE_COMPLETED, [text('four')])), {
      kind: 'succeeded',
      output: 'four',
    });
  });

  t.test(
    'with an output schema, the matching data part (or JSON text) is the structured output',
    async (t) => {
      const parts = [text('{"n":4}'), data({ n: 4 })];
      t.strictSame(remoteOutcome(agent(answer), task(TaskState.TASK_STATE_COMPLETED, parts)), {
        kind: 'succeeded',
        output: { n: 4 },
      });
      t.strictSame(remoteOutcome(agent(answer), task(TaskState.TASK_STATE_COMPLETED, [text('{"n":5}')])), {
        kind: 'succeeded',
        output: { n: 5 },
      });
      const wrong = remoteOutcome(agent(answer), task(TaskState.TASK_STATE_COMPLETED, [data({ n: 'four' })]));
      t.equal(wrong.kind, 'failed');
      t.equal(wrong.kind === 'failed' && wrong.error.code, 'invalid_output');
    },
  );

  t.test("a failed, rejected or canceled task is a failed delegation with the remote's reason", async (t) => {
    const failed = remoteOutcome(agent(), task(TaskState.TASK_STATE_FAILED, [], 'model_error: down'));
    t.strictSame(failed, {
      kind: 'failed',
      error: { code: 'subagent_failed', message: "the remote agent's task failed: model_error: down" },
    });
    const rejected = remoteOutcome(agent(), task(TaskState.TASK_STATE_REJECTED));
    t.match(rejected, {
      kind: 'failed',
      error: { code: 'subagent_failed', message: "the remote agent's task failed" },
    });
    const canceled = remoteOutcome(agent(), task(TaskState.TASK_STATE_CANCELED));
    t.match(canceled, { kind: 'failed', error: { message: "the remote agent's task was canceled" } });
  });

  t.test('submitted, working, input-required and auth-required keep the child waiting', async (t) => {
    for (const state of [
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_AUTH_REQUIRED,
    ])
      t.strictSame(remoteOutcome(agent(), task(state)), { kind: 'pending' }, TaskState[state]);
  });

  t.test('an agent answering with a message instead of a task answers with its text', async (t) => {
    const message = { messageId: 'm', role: 2, parts: [text('hi'), text('there')] } as never;
    t.strictSame(messageOutcome(agent(), message), { kind: 'succeeded', output: 'hi\nthere' });
  });
});
