// A call's detail (src/calls/): callDetailOf, what one call did, from the records alone
// (docs/guides/console.md), and cutLongText, which cuts its long strings.

import t from 'tap';
import { callDetailOf } from '../src/calls/call-detail-of.js';
import { cutLongText } from '../src/calls/cut-long-text.js';
import type { InvocationState } from '../src/store/invocation-state.js';
import type { CallRecord } from '../src/wire/call-record.js';
import { callRecord, modelReply, reactAgent } from './fixtures/react/recorded-calls.js';

const state = (over: Partial<InvocationState> = {}): InvocationState => ({
  v: 1,
  id: 'inv_1',
  agent: 'boss',
  status: 'running',
  input: { prompt: 'hi' },
  rootId: 'inv_1',
  depth: 0,
  createdAt: 0,
  deadline: 1,
  epoch: 1,
  defHash: 'x',
  modelCalls: 0,
  promptTokens: 0,
  completionTokens: 0,
  subModelCalls: 0,
  subPromptTokens: 0,
  subCompletionTokens: 0,
  recoveries: 0,
  cancelRequested: false,
  approvals: [],
  ...over,
});

const agent = reactAgent({
  instructions: 'Be brief.',
  inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } },
});

t.test('a rejected call shows its arguments, the decision and the rejection the model read', async (t) => {
  const rejected: CallRecord = {
    ...callRecord(0, 0, 'clock', { content: 'Tool clock was not approved: no' }),
    status: 'rejected',
  };
  const s = state({
    approvals: [
      {
        request: { callId: 't0-call0', kind: 'tool', name: 'clock', args: { tz: 'UTC' }, requestedAt: 'a' },
        decision: { approved: false, reason: 'no', decidedAt: 'b' },
      },
    ],
  });
  const d = callDetailOf({
    state: s,
    records: [modelReply(0, [['clock', '{"tz":"UTC"}']]), rejected],
    callId: 't0-call0',
    agent,
  });
  t.same(d?.request, { arguments: { tz: 'UTC' } });
  t.same(d?.decision, { approved: false, reason: 'no', decidedAt: 'b' });
  t.same(d?.result, { content: 'Tool clock was not approved: no' });
});

t.test(
  'arguments that are not JSON are shown as written; a failed call has its error, no result',
  async (t) => {
    const failed = callRecord(0, 0, 'clock', { error: { code: 'tool_failed', message: 'down' } });
    const d = callDetailOf({
      state: state(),
      records: [modelReply(0, [['clock', '{not json']]), failed],
      callId: 't0-call0',
      agent,
    });
    t.equal(d?.request.arguments, '{not json');
    t.same(d?.error, { code: 'tool_failed', message: 'down' });
    t.equal(d?.result, undefined);
    t.equal(d?.attempt, 1);
  },
);

t.test(
  'a model call of a changed definition: its messages without the system ones, and a note',
  async (t) => {
    const records = [modelReply(0, 'hello')];
    const same = callDetailOf({ state: state(), records, callId: 't0-model', agent });
    t.same(same?.request.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    t.equal(same?.note, undefined);
    const changed = callDetailOf({ state: state(), records, callId: 't0-model', agent: undefined });
    t.same(changed?.request.messages, [{ role: 'user', content: '{"prompt":"hi"}' }]);
    t.match(changed?.note, /definition changed/);
    t.same(changed?.result, { content: 'hello', toolCalls: [] });
    t.same(changed?.usage, { promptTokens: 1, completionTokens: 1 });
  },
);

t.test('no record, no detail', async (t) => {
  t.equal(callDetailOf({ state: state(), records: [], callId: 't0-model', agent }), undefined);
});

t.test('long strings are cut at a character boundary, anywhere in the value', async (t) => {
  const cut = cutLongText({ a: ['é'.repeat(10)], b: 'short', n: 3 }, 5);
  t.same(cut, { value: { a: ['éé'], b: 'short', n: 3 }, truncated: true });
  t.same(cutLongText({ a: 'abc' }, 5), { value: { a: 'abc' }, truncated: false });
});
