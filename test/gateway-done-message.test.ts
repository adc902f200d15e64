// The done message of a root (FINISH, docs/architecture/durability-and-fencing.md's wake-up) may carry the finished invocation: what
// READ_INVOCATION would answer, as JSON. A waiter reads it as tolerantly as a read, and falls back
// to reading whenever it is not that shape.
import { encodeNewInvocation } from '@agentmesh/shared';
import t from 'tap';
import { invocationOfDoneMessage } from '../services/gateway/src/invocations/read-invocation-safely.js';

const id = `inv_${'a'.repeat(32)}`;
// An HGETALL reply: the fields a new invocation is written with, then its end.
const state = [
  ...encodeNewInvocation({
    id,
    agent: 'solo',
    input: { prompt: 'go' },
    rootId: id,
    depth: 0,
    createdAt: 1,
    deadline: 2,
    defHash: 'x',
  }),
  'status',
  'succeeded',
  'output',
  '"hi"',
];
const record = JSON.stringify({ v: 1, callId: 't0-model', kind: 'model', name: 'm', status: 'succeeded' });

t.test('the invocation a done message carries is read as READ_INVOCATION would be', async (t) => {
  const read = invocationOfDoneMessage(JSON.stringify([state, ['t0-model', record]]));
  t.equal(read?.state.id, id);
  t.equal(read?.state.status, 'succeeded');
  t.equal(read?.state.output, 'hi');
  t.match(read?.calls, [{ callId: 't0-model', status: 'succeeded' }]);
});

t.test("no call records: Lua's cjson writes the empty table as {}", async (t) => {
  t.strictSame(invocationOfDoneMessage(JSON.stringify([state, {}]))?.calls, []);
});

t.test('a stored value that does not parse reads as a read would (null), not as an error', async (t) => {
  const bad = [...state, 'input', '{not json'];
  t.equal(invocationOfDoneMessage(JSON.stringify([bad, []]))?.state.input, null);
});

t.test('anything else is no invocation: the waiter reads it instead', async (t) => {
  for (const message of [
    '',
    'not json',
    '{}',
    '[]',
    JSON.stringify([state]),
    JSON.stringify([[], []]),
    JSON.stringify([[1, 2], []]),
    JSON.stringify([state, [3]]),
    JSON.stringify(['a', 'b']),
    JSON.stringify([['v', '9', 'id', id], []]), // a state of a version this gateway does not know
  ])
    t.equal(invocationOfDoneMessage(message), undefined, message.slice(0, 40));
});
