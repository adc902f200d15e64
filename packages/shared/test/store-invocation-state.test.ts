// The state encoding: what a new invocation writes to its hash, and how a hash the Lua steps
// changed afterwards (claimed, finished) reads back.
import t from 'tap';
import { modelCallId, toolCallId } from '../src/ids.js';
import { decodeCalls, decodeInvocation, encodeNewInvocation } from '../src/store/invocation-state.js';
import { callRecord, modelReply } from './fixtures/react/recorded-calls.js';

const created = {
  id: 'inv1',
  agent: 'boss',
  input: { prompt: 'hi' },
  rootId: 'inv1',
  depth: 0,
  createdAt: 1000,
  deadline: 61_000,
  defHash: 'h',
};
const hashOf = (fields: string[]) =>
  Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i]!, fields[i + 1]!]] : [])));

t.test('a new invocation is written queued, at epoch 0, with only the fields it has', async (t) => {
  const rows: [name: string, extra: Record<string, unknown>, fields: Record<string, string>][] = [
    ['a root', {}, {}],
    [
      'a child of a cancelled parent',
      { parentId: 'p', parentCallId: toolCallId(0, 0), parentAgent: 'boss', cancelRequested: true },
      { parentId: 'p', parentCallId: toolCallId(0, 0), parentAgent: 'boss', cancelRequested: '1' },
    ],
    ['an owned, traced one', { owner: 'k', traceparent: 'tp' }, { owner: 'k', traceparent: 'tp' }],
  ];
  for (const [name, extra, fields] of rows) {
    t.strictSame(
      hashOf(encodeNewInvocation({ ...created, ...extra })),
      {
        v: '1',
        id: 'inv1',
        agent: 'boss',
        status: 'queued',
        input: '{"prompt":"hi"}',
        rootId: 'inv1',
        depth: '0',
        createdAt: '1000',
        deadline: '61000',
        epoch: '0',
        defHash: 'h',
        ...fields,
      },
      name,
    );
  }
});

t.test('each stored hash decodes to the state the runner and the gateway read', async (t) => {
  const base = hashOf(encodeNewInvocation(created));
  const rows: [name: string, hash: Record<string, string>, expected: Record<string, unknown>][] = [
    [
      'as created',
      base,
      {
        status: 'queued',
        epoch: 0,
        modelCalls: 0,
        recoveries: 0,
        cancelRequested: false,
        input: { prompt: 'hi' },
      },
    ],
    [
      'claimed after a crash',
      { ...base, status: 'running', epoch: '3', startedAt: '2000', recoveries: '1' },
      { status: 'running', epoch: 3, startedAt: 2000, recoveries: 1 },
    ],
    [
      'finished with an output',
      {
        ...base,
        status: 'succeeded',
        output: '{"a":1}',
        finishedAt: '3000',
        modelCalls: '2',
        promptTokens: '7',
      },
      { status: 'succeeded', output: { a: 1 }, finishedAt: 3000, modelCalls: 2, promptTokens: 7 },
    ],
    [
      'failed with a coded error',
      { ...base, status: 'failed', error: '{"code":"cancelled","message":"The invocation was cancelled."}' },
      { status: 'failed', error: { code: 'cancelled', message: 'The invocation was cancelled.' } },
    ],
  ];
  for (const [name, hash, expected] of rows) t.match(decodeInvocation(hash), expected, name);
  t.equal(decodeInvocation(base).startedAt, undefined, 'no start time before it is claimed');
});

t.test('an unknown version of the state or of a call record is refused unsupported_version', async (t) => {
  t.throws(() => decodeInvocation({ v: '2' }), { name: 'MeshError', code: 'unsupported_version' });
  const future = JSON.stringify({ ...callRecord(0, 0, 'clock', 'started'), v: 2 });
  t.throws(() => decodeCalls({ x: future }), { name: 'MeshError', code: 'unsupported_version' });
});

t.test('recorded calls decode in the order they happened, whatever the hash order', async (t) => {
  const records = [
    callRecord(1, 0, 'clock', { content: 'b' }),
    modelReply(1, [['clock', '{}']]),
    callRecord(0, 1, 'clock', { content: 'a' }),
    modelReply(0, [
      ['clock', '{}'],
      ['clock', '{}'],
    ]),
    callRecord(0, 0, 'clock', { content: 'a' }),
  ];
  const hash = Object.fromEntries(records.map((r) => [r.callId, JSON.stringify(r)]));
  const order = decodeCalls(hash).map((r) => r.callId);
  t.strictSame(order, [modelCallId(0), toolCallId(0, 0), toolCallId(0, 1), modelCallId(1), toolCallId(1, 0)]);
});
