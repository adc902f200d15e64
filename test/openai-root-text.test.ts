// What a streamed chat completion sends (docs/guides/openai-compatible.md): the root's model calls'
// text from its deltas, completed by each call's recorded text, a new call or a reset after a
// blank line, nothing retracted; other nodes' text and stale deltas add nothing.
import t from 'tap';
import { RootText } from '../services/gateway/src/openai/root-text.js';

const ROOT = 'inv_root';
const delta = (data: object, invocationId = ROOT) => ({ invocationId, type: 'delta', data });
const recorded = (callId: string, content: string | null, invocationId = ROOT) => ({
  invocationId,
  type: 'model_call',
  data: { callId, turn: 0, content, toolCalls: [] },
});
const run = (events: ReturnType<typeof delta>[]) => {
  const text = new RootText(ROOT);
  return { pieces: events.map((e) => text.take(e)), text };
};

t.test(
  "a call's deltas are sent as they come, and its recorded text adds only what they lacked",
  async (t) => {
    const { pieces, text } = run([
      delta({ callId: 't0-model', seq: 0, content: 'Hel' }),
      delta({ callId: 't0-model', seq: 1, content: 'lo' }),
      recorded('t0-model', 'Hello world'),
      delta({ callId: 't0-model', seq: 2, content: ' world' }),
    ]);
    t.strictSame(pieces, ['Hel', 'lo', ' world', ''], 'a delta after the record is stale');
    t.ok(text.streamed);
  },
);

t.test(
  'without deltas, each recorded call is sent whole; calls after the first after a blank line',
  async (t) => {
    const { pieces } = run([
      recorded('t0-model', null),
      recorded('t1-model', 'Let me look.'),
      recorded('t2-model', 'Found it.'),
    ]);
    t.strictSame(pieces, ['', 'Let me look.', '\n\nFound it.']);
  },
);

t.test('a reset starts the call over after a blank line; the record completes the new attempt', async (t) => {
  const { pieces } = run([
    delta({ callId: 't0-model', seq: 0, content: 'draft' }),
    delta({ callId: 't0-model', seq: 0, content: 'fin', reset: true }),
    recorded('t0-model', 'final'),
  ]);
  t.strictSame(pieces, ['draft', '\n\nfin', 'al']);
});

t.test(
  "a gap in a call's deltas holds them back; a record that does not continue them follows a blank line",
  async (t) => {
    const { pieces } = run([
      delta({ callId: 't0-model', seq: 0, content: 'ab' }),
      delta({ callId: 't0-model', seq: 2, content: 'ef' }),
      recorded('t0-model', 'abcdef'),
      delta({ callId: 't1-model', seq: 0, content: 'xyz' }),
      recorded('t1-model', 'other'),
    ]);
    t.strictSame(pieces, ['ab', '', 'cdef', '\n\nxyz', '\n\nother']);
  },
);

t.test("other nodes' events and events without a call add nothing", async (t) => {
  const { pieces, text } = run([
    delta({ callId: 't0-model', seq: 0, content: 'child' }, 'inv_root-t0-call0'),
    recorded('t0-model', 'child answer', 'inv_root-t0-call0'),
    { invocationId: ROOT, type: 'status', data: { status: 'running' } },
    { invocationId: ROOT, type: 'delta', data: null } as unknown as ReturnType<typeof delta>,
    delta({ callId: 't0-model', seq: 0 }),
  ]);
  t.strictSame(pieces, ['', '', '', '', '']);
  t.notOk(text.streamed, 'nothing streamed: the output will be the content');
});
