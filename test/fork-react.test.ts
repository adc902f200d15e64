// Re-run from any call (docs/guides/durability.md), ReAct agents through the real mesh: a fork reuses the recorded
// calls before its point (tools there never run again, the model is asked only for the calls after
// it), a given result reaches the model, forks of forks, idempotency, the fork's event stream,
// usage and budgets of live calls only, a new input, and an original that stays byte for byte.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const runs = { lookup: 0, count: 0 };

/** Turn 0 looks up twice, turn 1 counts, turn 2 answers with every tool message it saw. */
const SCRIPT: FakeScript = (r) => {
  if (turnOf(r) === 0)
    return {
      calls: [
        { name: 'lookup', args: { q: 'a' } },
        { name: 'lookup', args: { q: 'b' } },
      ],
    };
  if (turnOf(r) === 1) return { calls: [{ name: 'count', args: {} }] };
  const user = r.messages.find((m) => m.role === 'user')?.content;
  return {
    final: `${user}: ${toolMessagesOf(r)
      .map((m) => m.content)
      .join(' | ')}`,
  };
};

const mesh = await startMesh(t, {
  agentsYaml: '  writer: {instructions: "@agent writer", tools: [lookup, count]}\n',
  script: SCRIPT,
  tools: [
    {
      name: 'lookup',
      description: 'Looks up.',
      input: { type: 'object', properties: { q: { type: 'string' } } },
      run: async (args) => {
        runs.lookup++;
        return `found ${(args as { q: string }).q}`;
      },
    },
    {
      name: 'count',
      description: 'Counts.',
      input: { type: 'object' },
      run: async () => `counted ${++runs.count}`,
    },
  ],
});

/** The raw body of GET /invocations/{id}. */
const rawView = async (id: string) =>
  (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}` })).body;

const fork = (id: string, body: unknown, query = 'wait=30', headers: Record<string, string> = {}) =>
  mesh.request('POST', `/invocations/${id}/fork?${query}`, { payload: body, headers });

/** The requests the model got since `from` (an index into its request log). */
const since = (from: number): SeenRequest[] => mesh.model.requests.slice(from);

const original = await mesh.invoke('writer', { prompt: 'go' });
t.equal(original.status, 200);
t.equal(original.json.output, 'go: found a | found b | counted 1');
t.equal(mesh.model.requests.length, 3);

t.test('a fork from a tool call reuses every call before it and runs live from it', async (t) => {
  const before = await rawView(original.json.id);
  const [lookups, asked] = [runs.lookup, mesh.model.requests.length];
  const res = await fork(original.json.id, { fromCallId: 't1-call0' });
  t.equal(res.status, 200);
  const view = res.json;
  t.not(view.id, original.json.id);
  t.equal(view.rootId, view.id, 'a new root');
  t.equal(view.output, 'go: found a | found b | counted 2', 'the tool at the point ran again');
  t.equal(runs.lookup, lookups, 'the tools before it never ran again');
  const asks = since(asked);
  t.equal(asks.length, 1, 'the model was asked for the call after it only');
  t.same(
    toolMessagesOf(asks[0]!).map((m) => m.content),
    ['found a', 'found b', 'counted 2'],
    'with the reused results and the live one',
  );
  t.same(view.forkedFrom, { invocationId: original.json.id, callId: 't1-call0' });
  const reused = view.calls.filter((c: { reused?: boolean }) => c.reused);
  t.same(
    reused.map((c: { callId: string }) => c.callId),
    ['t0-model', 't0-call0', 't0-call1', 't1-model'],
  );
  for (const c of reused) {
    const o = original.json.calls.find((x: { callId: string }) => x.callId === c.callId);
    t.same(
      [c.startedAt, c.finishedAt, c.status],
      [o.startedAt, o.finishedAt, o.status],
      `${c.callId} keeps its timings`,
    );
  }
  const live = view.calls.filter((c: { reused?: boolean }) => !c.reused);
  t.same(
    live.map((c: { callId: string; status: string }) => [c.callId, c.status]),
    [
      ['t1-call0', 'succeeded'],
      ['t2-model', 'succeeded'],
    ],
  );
  t.same(
    view.usage,
    { modelCalls: 1, promptTokens: 11, completionTokens: 7 },
    'usage counts live calls only',
  );
  t.same(view.treeUsage, view.usage);
  t.equal(await rawView(original.json.id), before, "the original's view is byte for byte the same");
  const listed = (await mesh.get('/invocations?limit=5')).json.items;
  t.same(
    listed.find((i: { id: string }) => i.id === view.id).forkedFrom,
    view.forkedFrom,
    'listed with its origin',
  );
  t.notOk(listed.find((i: { id: string }) => i.id === original.json.id).forkedFrom);
});

t.test('a given result is not run: it reaches the model and the fork goes on live after it', async (t) => {
  const [lookups, counts, asked] = [runs.lookup, runs.count, mesh.model.requests.length];
  const res = await fork(original.json.id, { fromCallId: 't0-call1', result: { hits: 3 } });
  t.equal(res.status, 200);
  t.equal(runs.lookup, lookups, 'neither lookup ran');
  t.equal(runs.count, counts + 1, 'the calls after it ran live');
  t.equal(since(asked).length, 2, 'turns 1 and 2 asked the model');
  t.equal(
    res.json.output,
    `go: found a | {"hits":3} | counted ${counts + 1}`,
    'compact JSON reached the model',
  );
  const given = res.json.calls.find((c: { callId: string }) => c.callId === 't0-call1');
  t.same(given.resultGiven, true);
  t.equal(given.status, 'succeeded');
  t.notOk(given.reused, 'a given result is not a reused one');
  t.ok(Date.parse(given.startedAt) > Date.parse(original.json.finishedAt), "with the fork's own timings");
  const lookupsBefore = runs.lookup;
  const text = await fork(original.json.id, { fromCallId: 't0-call0', result: 'plain text' });
  t.match(text.json.output, /^go: plain text \| found b \|/, 'a string as is');
  t.equal(runs.lookup, lookupsBefore + 1, 'the call after it in its turn ran live again');
  const none = await fork(original.json.id, { fromCallId: 't0-call0', result: null });
  t.match(none.json.output, /^go: null \| found b \|/, 'null is a given value');
});

t.test('a fork of a fork reuses what the fork ran live, with its timings', async (t) => {
  const first = (await fork(original.json.id, { fromCallId: 't1-call0' })).json;
  const [counts, asked] = [runs.count, mesh.model.requests.length];
  const second = await fork(first.id, { fromCallId: 't2-model' });
  t.equal(second.status, 200);
  t.equal(runs.count, counts, 'no tool ran');
  t.equal(since(asked).length, 1);
  t.equal(second.json.output, first.output);
  t.same(second.json.forkedFrom, { invocationId: first.id, callId: 't2-model' });
  const count = second.json.calls.find((c: { callId: string }) => c.callId === 't1-call0');
  const ranIn = first.calls.find((c: { callId: string }) => c.callId === 't1-call0');
  t.same([count.reused, count.startedAt, count.finishedAt], [true, ranIn.startedAt, ranIn.finishedAt]);
});

t.test(
  'a fork with a new input reuses the replies before its point; its user message is its own',
  async (t) => {
    const asked = mesh.model.requests.length;
    const res = await fork(original.json.id, { fromCallId: 't1-model', input: { prompt: 'again' } });
    t.equal(res.status, 200);
    t.same(res.json.input, { prompt: 'again' });
    const asks = since(asked);
    t.equal(asks.length, 2, 'turns 1 and 2');
    t.equal(asks[0]!.messages.find((m) => m.role === 'user')?.content, 'again');
    t.match(res.json.output, /^again: found a \| found b \| counted \d+$/);
  },
);

t.test('only live calls count toward a budget', async (t) => {
  // The original's three model calls used 54 tokens; the fork's one live call uses 18.
  const res = await fork(original.json.id, { fromCallId: 't2-model' }, 'wait=30&budget=20');
  t.equal(res.status, 200);
  t.equal(res.json.status, 'succeeded');
  t.same(res.json.treeUsage, { modelCalls: 1, promptTokens: 11, completionTokens: 7 });
});

t.test("the fork's event stream starts with its reused calls, marked", async (t) => {
  const res = await fork(original.json.id, { fromCallId: 't1-call0' });
  const text = (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${res.json.id}/events` }))
    .body;
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
  const head = events.slice(0, 6).map((e) => [e.type, e.data.callId ?? e.data.status, e.data.reused]);
  t.same(head, [
    ['model_call', 't0-model', true],
    ['tool_call', 't0-call0', true],
    ['tool_call', 't0-call1', true],
    ['model_call', 't1-model', true],
    ['status', 'queued', undefined],
    ['status', 'running', undefined],
  ]);
  t.same(events[0].data, {
    callId: 't0-model',
    turn: 0,
    content: null,
    toolCalls: ['lookup', 'lookup'],
    reused: true,
  });
  t.ok(
    events.slice(4).every((e) => e.data.reused === undefined),
    'live events are not marked',
  );
  t.equal(events.at(-1).data.status, 'succeeded');
});

t.test('the same Idempotency-Key forks once; another body under it is refused', async (t) => {
  const asked = mesh.model.requests.length;
  const key = { 'idempotency-key': 'fork-once' };
  const a = await fork(original.json.id, { fromCallId: 't2-model' }, 'wait=30', key);
  const b = await fork(original.json.id, { fromCallId: 't2-model' }, 'wait=30', key);
  t.equal(a.status, 200);
  t.equal(b.json.id, a.json.id, 'the same fork');
  t.equal(since(asked).length, 1, 'one run');
  const other = await fork(original.json.id, { fromCallId: 't1-model' }, 'wait=30', key);
  t.equal(other.status, 422);
  t.equal(other.json.error.code, 'idempotency_key_reused');
  const invoked = await mesh.invoke('writer', { prompt: 'go' }, 'wait=30', key);
  t.equal(invoked.status, 200);
  t.not(invoked.json.id, a.json.id, "a fork's key never matches an invoke's");
  t.notOk(invoked.json.forkedFrom);
  const elsewhere = await fork(invoked.json.id, { fromCallId: 't2-model' }, 'wait=30', key);
  t.not(elsewhere.json.id, a.json.id, 'nor a fork of another invocation');
  // A repeat reads nothing of the node: it answers its fork after the node is gone too.
  await mesh.client.del(keyLayout(mesh.prefix).invocation(invoked.json.id, invoked.json.id));
  const repeat = await fork(invoked.json.id, { fromCallId: 't2-model' }, 'wait=30', key);
  t.same([repeat.status, repeat.json.id], [200, elsewhere.json.id]);
  t.equal(
    (await fork(invoked.json.id, { fromCallId: 't2-model' })).status,
    404,
    'without the key, it is gone',
  );
});

t.test('a fork that outlasts its wait answers 202 with Location', async (t) => {
  mesh.model.setScript((r) => ({ ...SCRIPT(r), latencyMs: 500 }));
  t.teardown(() => mesh.model.setScript(SCRIPT));
  const res = await fork(original.json.id, { fromCallId: 't2-model' }, 'wait=0');
  t.equal(res.status, 202);
  t.equal(res.headers.location, `/invocations/${res.json.id}`);
  t.equal((await mesh.waitForStatus(res.json.id, 'succeeded')).forkedFrom.callId, 't2-model');
});

t.test("a fork of a session's invocation sees the history it saw, and joins no session", async (t) => {
  await mesh.invoke('writer', { prompt: 'first' }, 'wait=30&session=chat');
  const second = (await mesh.invoke('writer', { prompt: 'second' }, 'wait=30&session=chat')).json;
  const asked = mesh.model.requests.length;
  const last = second.calls.filter((c: { kind: string }) => c.kind === 'model').at(-1).callId;
  t.not(last, 't0-model', 'it made more than one model call');
  const res = await fork(second.id, { fromCallId: last });
  t.equal(res.status, 200);
  const [ask] = since(asked);
  t.same(
    ask!.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['first', 'second'],
    "the session's earlier turn, then its own",
  );
  t.match(ask!.messages[2], { role: 'assistant', content: /^first: / });
  const session = (await mesh.get('/sessions/chat')).json;
  t.same(session.invocations.length, 2, 'the fork is not a turn of the session');
  t.notOk(session.invocations.includes(res.json.id));
});
