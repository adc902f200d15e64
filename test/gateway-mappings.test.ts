// The gateway's pure mappings, with nothing running: a root's done message to the invocation it
// carries, a streamed root's events to the text of a chat completion, an agent and its invocation to
// an MCP tool and its tools/call result. Each former file's tests are one heading subtest below, its
// helpers inside it.
import { type AgentPlan, encodeNewInvocation, type InvocationView } from '@agentmesh/shared';
import t from 'tap';
import { invocationOfDoneMessage } from '../services/gateway/src/invocations/read-invocation-safely.js';
import { toolResult } from '../services/gateway/src/mcp/tool-result.js';
import { toolSchemas } from '../services/gateway/src/mcp/tool-schemas.js';
import { RootText } from '../services/gateway/src/openai/root-text.js';

// ---------------------------------------------------------------------------------------------------
// The done message of a root (FINISH, docs/architecture/durability-and-fencing.md's wake-up) may carry the finished invocation: what
// READ_INVOCATION would answer, as JSON. A waiter reads it as tolerantly as a read, and falls back
// to reading whenever it is not that shape.
t.test("a root's done message carries the finished invocation", async (t) => {
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
});

// ---------------------------------------------------------------------------------------------------
// What a streamed chat completion sends (docs/guides/openai-compatible.md): the root's model calls'
// text from its deltas, completed by each call's recorded text, a new call or a reset after a
// blank line, nothing retracted; other nodes' text and stale deltas add nothing.
t.test("a streamed chat completion sends the root's text, nothing retracted", async (t) => {
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

  t.test(
    'a reset starts the call over after a blank line; the record completes the new attempt',
    async (t) => {
      const { pieces } = run([
        delta({ callId: 't0-model', seq: 0, content: 'draft' }),
        delta({ callId: 't0-model', seq: 0, content: 'fin', reset: true }),
        recorded('t0-model', 'final'),
      ]);
      t.strictSame(pieces, ['draft', '\n\nfin', 'al']);
    },
  );

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
});

// ---------------------------------------------------------------------------------------------------
// How an agent appears as an MCP tool and how its invocation answers a tools/call (issue 12,
// docs/guides/mcp.md): pure mappings, nothing running.
t.test('an agent as an MCP tool, and its invocation as the tools/call result', async (t) => {
  const agent = (inputSchema: AgentPlan['inputSchema'], outputSchema: AgentPlan['outputSchema']) =>
    ({ name: 'a', inputSchema, outputSchema }) as AgentPlan;
  const view = (over: Partial<InvocationView>) =>
    ({ id: 'inv_0123456789abcdef0123456789abcdef', status: 'succeeded', ...over }) as InvocationView;

  t.test('an object input schema is the tool input schema as it is', async (t) => {
    const input = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    t.strictSame(toolSchemas(agent(input, null)), { input, output: undefined, wrapped: false });
  });

  t.test('an agent without an input shape takes any object', async (t) => {
    t.strictSame(toolSchemas(agent(null, null)).input, { type: 'object' });
  });

  t.test('an input that is not an object is offered as {input}', async (t) => {
    const s = toolSchemas(agent({ type: 'array', items: { type: 'integer' } }, null));
    t.equal(s.wrapped, true);
    t.strictSame(s.input, {
      type: 'object',
      properties: { input: { type: 'array', items: { type: 'integer' } } },
      required: ['input'],
      additionalProperties: false,
    });
  });

  t.test('only an object output schema becomes the tool output schema', async (t) => {
    const out = { type: 'object', properties: { n: { type: 'integer' } } };
    t.strictSame(toolSchemas(agent(null, out)).output, out);
    t.equal(toolSchemas(agent(null, { type: 'string' })).output, undefined);
  });

  t.test('text, structured and other output answer as MCP content', async (t) => {
    const meta = { 'agentmesh/invocationId': 'inv_0123456789abcdef0123456789abcdef' };
    t.strictSame(toolResult(view({ output: 'hi' }), 300), {
      content: [{ type: 'text', text: 'hi' }],
      _meta: meta,
    });
    t.strictSame(toolResult(view({ output: { n: 1 } }), 300), {
      content: [{ type: 'text', text: '{"n":1}' }],
      structuredContent: { n: 1 },
      _meta: meta,
    });
    t.strictSame(toolResult(view({ output: [1, 2] }), 300), {
      content: [{ type: 'text', text: '[1,2]' }],
      _meta: meta,
    });
  });

  t.test(
    'failed, cancelled and unfinished invocations are isError results naming the invocation',
    async (t) => {
      const id = 'inv_0123456789abcdef0123456789abcdef';
      const failed = toolResult(
        view({ status: 'failed', error: { code: 'model_error', message: 'Bad.' } }),
        300,
      );
      t.equal(failed.isError, true);
      t.strictSame(failed.content, [{ type: 'text', text: `Invocation ${id} failed: model_error: Bad.` }]);
      const cancelled = toolResult(
        view({ status: 'cancelled', error: { code: 'cancelled', message: 'Gone.' } }),
        300,
      );
      t.strictSame(cancelled.content, [
        { type: 'text', text: `Invocation ${id} cancelled: cancelled: Gone.` },
      ]);
      const running = toolResult(view({ status: 'waiting' }), 5);
      t.equal(running.isError, true);
      t.strictSame(running.content, [
        {
          type: 'text',
          text: `Invocation ${id} is still waiting after 5 s; follow it at GET /invocations/${id}.`,
        },
      ]);
    },
  );
});
