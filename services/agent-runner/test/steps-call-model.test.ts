// callModel: what a failed model call records. The user sees our words for the runner's own
// faults (never a raw Redis or network message: issue 7, defect 8), the log keeps the detail, and
// a store failure after the reply is a system fault that propagates instead of failing the model call.
import type { AgentPlan, CallRecord, Logger } from '@agentmesh/shared';
import t from 'tap';
import { runnerMetrics } from '../src/loop/metrics.js';
import type { ChatModel } from '../src/loop/model/chat-model.js';
import { callModel } from '../src/loop/steps/call-model.js';
import type { RunnerContext } from '../src/loop/steps/runner-context.js';
import type { Activation } from '../src/loop/store/activation-store.js';

const agent: AgentPlan = {
  name: 'solo',
  kind: 'react',
  description: '',
  model: 'default',
  tools: [],
  subagents: [],
  maxIterations: 10,
  inputSchema: null,
  outputSchema: null,
  callables: [],
  definitionHash: 'x',
};

/** A context whose store keeps records in memory (or fails when told), with a recording log. */
function harness(model: ChatModel, failOn?: CallRecord['status']) {
  const recorded: CallRecord[] = [];
  const logged: unknown[] = [];
  const log: Logger = { info() {}, debug() {}, error() {}, warn: (obj) => void logged.push(obj) };
  const ctx = {
    runnerId: 'r1',
    plan: { agents: { solo: agent } },
    models: new Map([['default', model]]),
    metrics: runnerMetrics(),
    log,
    store: {
      record: async (_a: Activation, r: CallRecord) => {
        if (r.status === failOn) throw new Error('Connection is closed. (redis 10.0.0.7:6379)');
        recorded.push(r);
      },
    },
  } as unknown as RunnerContext;
  const a = {
    epoch: 1,
    recovered: false,
    state: {
      id: 'inv_1',
      rootId: 'inv_1',
      agent: 'solo',
      input: { prompt: 'go' },
      deadline: Date.now() + 60_000,
    },
    records: new Map(),
  } as unknown as Activation;
  return { ctx, a, recorded, logged };
}
const signal = new AbortController().signal;

t.test('a model client that throws a raw error fails the call with the registry message only', async (t) => {
  const model: ChatModel = {
    complete: async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7:6379');
    },
  };
  const h = harness(model);
  const error = await callModel(h.ctx, agent, h.a, 0, 't0-model', signal);
  t.strictSame(error, { code: 'model_error', message: 'The model endpoint refused the request.' });
  t.match(h.recorded.at(-1), { status: 'failed', error: { code: 'model_error' } });
  t.notMatch(JSON.stringify(h.recorded), /ECONNREFUSED|10\.0\.0\.7/, 'nothing of it is recorded');
  t.match(JSON.stringify(h.logged), /ECONNREFUSED 10\.0\.0\.7:6379/, 'the log has the detail');
});

t.test('a store failure after the reply propagates: the call stays in doubt, not failed', async (t) => {
  const model: ChatModel = {
    complete: async () => ({ content: 'hi', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } }),
  };
  const h = harness(model, 'succeeded');
  await t.rejects(callModel(h.ctx, agent, h.a, 0, 't0-model', signal), /Connection is closed/);
  t.strictSame(
    h.recorded.map((r) => r.status),
    ['started'],
    'no failure is recorded for the model call',
  );
});
