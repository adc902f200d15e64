// Forks through the real mesh (POST /invocations/{id}/fork, docs/guides/durability.md): of ReAct
// agents, every refusal, of delegations, and of code agents. Each former file's tests are one heading
// subtest below, with its own mesh, started in the heading and stopped at its end, and its helpers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout, parseConfig, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';

// ---------------------------------------------------------------------------------------------------
// Re-run from any call (docs/guides/durability.md), ReAct agents through the real mesh: a fork reuses the recorded
// calls before its point (tools there never run again, the model is asked only for the calls after
// it), a given result reaches the model, forks of forks, idempotency, the fork's event stream,
// usage and budgets of live calls only, a new input, and an original that stays byte for byte.
t.test(
  'forks of ReAct agents: reused calls, given results, forks of forks, idempotency, events, usage',
  async (t) => {
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

    t.test(
      'a given result is not run: it reaches the model and the fork goes on live after it',
      async (t) => {
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
        t.ok(
          Date.parse(given.startedAt) > Date.parse(original.json.finishedAt),
          "with the fork's own timings",
        );
        const lookupsBefore = runs.lookup;
        const text = await fork(original.json.id, { fromCallId: 't0-call0', result: 'plain text' });
        t.match(text.json.output, /^go: plain text \| found b \|/, 'a string as is');
        t.equal(runs.lookup, lookupsBefore + 1, 'the call after it in its turn ran live again');
        const none = await fork(original.json.id, { fromCallId: 't0-call0', result: null });
        t.match(none.json.output, /^go: null \| found b \|/, 'null is a given value');
      },
    );

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
      const text = (
        await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${res.json.id}/events` })
      ).body;
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
  },
);

// ---------------------------------------------------------------------------------------------------
// Every refusal of POST /invocations/{id}/fork (docs/guides/durability.md, docs/reference/bounds.md), with API keys on: each with its
// code and status, before anything is written.
t.test('every refusal of a fork, with its code and status, before anything is written', async (t) => {
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const mesh = await startMesh(t, {
    apiKeys: 'k-all,k-other,k-scoped=lead',
    headers: bearer('k-all'),
    agentsYaml: `
  lead: {instructions: "@agent lead", tools: [note], subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
  guard: {instructions: "@agent guard", tools: [note], approvals: [note]}
`,
    script: (r) => {
      if (r.agent === 'helper') return { final: 'helped' };
      if (turnOf(r) > 0) return { final: 'done' };
      return {
        calls: [
          { name: 'note', args: {} },
          ...(r.agent === 'lead' ? [{ name: '_subagent_helper', args: { prompt: 'h' } }] : []),
          { name: 'note', args: {} },
        ],
      };
    },
    tools: [{ name: 'note', description: 'Notes.', input: { type: 'object' }, run: async () => 'noted' }],
  });

  const fork = (id: string, payload: unknown, key = 'k-all', query = 'wait=30') =>
    mesh.request('POST', `/invocations/${id}/fork?${query}`, { payload, headers: bearer(key) });
  const error = (res: { status: number; json: { error?: { code: string } } }) => [
    res.status,
    res.json.error?.code,
  ];

  const lead = (await mesh.invoke('lead', { prompt: 'go' })).json;
  t.equal(lead.status, 'succeeded');

  t.test('an unknown, malformed or invisible invocation is not found', async (t) => {
    t.same(error(await fork('inv_00000000000000000000000000000000', { fromCallId: 't0-model' })), [
      404,
      'invocation_not_found',
    ]);
    t.same(error(await fork('nope', { fromCallId: 't0-model' })), [404, 'invocation_not_found']);
    t.same(
      error(await fork(lead.id, { fromCallId: 't0-model' }, 'k-other')),
      [404, 'invocation_not_found'],
      "another key's",
    );
    const unauthenticated = await mesh.request('POST', `/invocations/${lead.id}/fork`, {
      payload: { fromCallId: 't0-model' },
      headers: {},
    });
    t.same(error(unauthenticated), [401, 'unauthorized']);
  });

  t.test("a node whose agent is outside the key's scope is forbidden", async (t) => {
    const own = await mesh.invoke('lead', { prompt: 'go' }, 'wait=30', bearer('k-scoped'));
    const child = own.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
    t.same(error(await fork(child, { fromCallId: 't0-model' }, 'k-scoped')), [403, 'forbidden']);
    t.equal(
      (await fork(own.json.id, { fromCallId: 't1-model' }, 'k-scoped')).status,
      200,
      'its own root it may fork',
    );
    t.equal(
      (await fork(child, { fromCallId: 't0-model' }, 'k-all')).status,
      404,
      'and no other key sees the child',
    );
  });

  t.test('a call the invocation does not have is not found', async (t) => {
    const res = await fork(lead.id, { fromCallId: 't7-model' });
    t.same(error(res), [404, 'call_not_found']);
    t.match(res.json.error.message, /no call with call id t7-model/);
  });

  t.test('a call without a final recorded outcome, at or before the point, cannot be reused', async (t) => {
    const waiting = (await mesh.invoke('guard', { prompt: 'go' }, 'wait=0')).json.id;
    const view = await mesh.waitForStatus(waiting, 'waiting');
    t.same(
      view.calls.map((c: { callId: string; status: string }) => [c.callId, c.status]),
      [
        ['t0-model', 'succeeded'],
        ['t0-call0', 'awaiting_approval'],
        ['t0-call1', 'awaiting_approval'],
      ],
    );
    const at = await fork(waiting, { fromCallId: 't0-call0' });
    t.same(error(at), [409, 'call_not_recorded']);
    t.match(at.json.error.message, /t0-call0 \(tool note\) is awaiting_approval/);
    const after = await fork(waiting, { fromCallId: 't0-call1', result: 'x' });
    t.same(error(after), [409, 'call_not_recorded'], 'a call before the point');
    const given = await fork(
      waiting,
      { fromCallId: 't0-call0', result: 'approved by hand' },
      'k-all',
      'wait=0',
    );
    t.equal(given.status, 202, 'a running node forks at a point whose earlier calls are recorded');
    const forked = await mesh.waitForStatus(given.json.id, 'waiting');
    t.same(
      forked.pendingApprovals.map((p: { callId: string }) => p.callId),
      ['t0-call1'],
      'the calls after the point run live: the second note asks again',
    );
  });

  t.test('a result for a model call, a bad input or a malformed body is invalid input', async (t) => {
    const model = await fork(lead.id, { fromCallId: 't1-model', result: 'x' });
    t.same(error(model), [400, 'invalid_input']);
    t.same(model.json.error.details, [
      { path: '/result', message: 'must be absent: t1-model is a model call' },
    ]);
    const input = await fork(lead.id, { fromCallId: 't1-model', input: { prompt: 5 } });
    t.same(error(input), [400, 'invalid_input']);
    t.same(
      input.json.error.details,
      [{ path: '/prompt', message: 'must be string' }],
      'paths inside the input',
    );
    t.same(error(await fork(lead.id, {})), [400, 'invalid_input']);
    t.same(error(await fork(lead.id, { fromCallId: 't1-model', extra: 1 })), [400, 'invalid_input']);
    t.same(error(await fork(lead.id, { fromCallId: 'bad id!' })), [400, 'invalid_input']);
    const empty = await mesh.gateway.app.inject({
      method: 'POST',
      url: `/invocations/${lead.id}/fork`,
      headers: { ...bearer('k-all'), 'content-type': 'application/json' },
    });
    t.same([empty.statusCode, JSON.parse(empty.body).error.code], [400, 'invalid_json']);
    t.same(error(await fork(lead.id, { fromCallId: 't1-model' }, 'k-all', 'wait=1000')), [
      400,
      'invalid_input',
    ]);
  });

  t.test(
    'an agent whose definition changed since the node ran is refused, naming what changed',
    async (t) => {
      const text = fs.readFileSync(mesh.configFile, 'utf8').replace('"@agent lead"', '"@agent lead, v2"');
      const config = parseConfig(text, mesh.configFile, {}, 'yaml');
      const { gateway } = await listenGateway(t, mesh, { config, apiKeys: 'k-all' });
      const res = await gateway.app.inject({
        method: 'POST',
        url: `/invocations/${lead.id}/fork`,
        payload: { fromCallId: 't1-model' },
        headers: bearer('k-all'),
      });
      const body = JSON.parse(res.body);
      t.same([res.statusCode, body.error.code], [409, 'plan_changed']);
      t.equal(
        body.error.message,
        'The definition of agent lead changed since the invocation ran: instructions changed.',
      );
      // The earlier definition no longer stored (its key expired): the change is still refused.
      for (const key of await mesh.client.keys(`${keyLayout(mesh.prefix).definition('*')}`))
        await mesh.client.del(key);
      const unknown = await gateway.app.inject({
        method: 'POST',
        url: `/invocations/${lead.id}/fork`,
        payload: { fromCallId: 't1-model' },
        headers: bearer('k-all'),
      });
      t.match(JSON.parse(unknown.body).error, { code: 'plan_changed', message: /no longer known/ });
    },
  );

  t.test('an invocation with records past the bounds is refused before they are read', async (t) => {
    const { gateway } = await listenGateway(t, mesh, { apiKeys: 'k-all,k-other', maxForkRecords: 3 });
    const res = await gateway.app.inject({
      method: 'POST',
      url: `/invocations/${lead.id}/fork`,
      payload: { fromCallId: 't1-model' },
      headers: bearer('k-all'),
    });
    const body = JSON.parse(res.body);
    t.same([res.statusCode, body.error.code], [422, 'fork_too_large']);
    t.match(body.error.message, /has 5 call records \(MESH_MAX_FORK_RECORDS is 3\)/);
    const bytes = await listenGateway(t, mesh, { apiKeys: 'k-all', maxForkBytes: 1024 });
    const big = await bytes.gateway.app.inject({
      method: 'POST',
      url: `/invocations/${lead.id}/fork`,
      payload: { fromCallId: 't1-model' },
      headers: bearer('k-all'),
    });
    t.match(JSON.parse(big.body).error, {
      code: 'fork_too_large',
      message: /bytes of call records \(MESH_MAX_FORK_BYTES is 1024\)/,
    });
    const other = await gateway.app.inject({
      method: 'POST',
      url: `/invocations/${lead.id}/fork`,
      payload: { fromCallId: 't1-model' },
      headers: bearer('k-other'),
    });
    t.equal(other.statusCode, 404, "another key's invocation is not found, whatever its size");
  });

  t.test('Idempotency-Keys are scoped to the API key', async (t) => {
    const own = (await mesh.invoke('lead', { prompt: 'go' }, 'wait=30', bearer('k-other'))).json;
    const key = { 'idempotency-key': 'same' };
    const a = await mesh.request('POST', `/invocations/${lead.id}/fork`, {
      payload: { fromCallId: 't1-model' },
      headers: { ...bearer('k-all'), ...key },
    });
    const b = await mesh.request('POST', `/invocations/${own.id}/fork`, {
      payload: { fromCallId: 't1-model' },
      headers: { ...bearer('k-other'), ...key },
    });
    t.equal(a.status, 200);
    t.equal(b.status, 200);
    t.not(a.json.id, b.json.id);
    const view = await mesh.get(`/invocations/${b.json.id}`, bearer('k-all'));
    t.equal(view.status, 404, 'the fork belongs to the key that made it');
  });
});

// ---------------------------------------------------------------------------------------------------
// Forks and delegations (docs/guides/durability.md), through the real mesh: a reused delegation keeps the original
// child, which is not run again (nor cancelled with the fork), a fork at the delegation runs a new
// child of its own, a given result starts none, and a child node forks as a root of its agent.
t.test('forks and delegations: reused children, new children, given results, child nodes', async (t) => {
  let helped = 0;
  const SCRIPT: FakeScript = (r) => {
    if (r.agent === 'helper') return { final: `helped ${++helped}` };
    if (turnOf(r) === 0)
      return {
        calls: [
          { name: 'note', args: { text: 'x' } },
          { name: '_subagent_helper', args: { prompt: 'help' } },
        ],
      };
    return {
      final: toolMessagesOf(r)
        .map((m) => m.content)
        .join(' | '),
    };
  };

  const notes = { runs: 0 };
  const mesh = await startMesh(t, {
    agentsYaml: `
  lead: {instructions: "@agent lead", tools: [note], subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
`,
    script: SCRIPT,
    tools: [
      {
        name: 'note',
        description: 'Notes.',
        input: { type: 'object' },
        run: async () => `noted ${++notes.runs}`,
      },
    ],
  });

  const raw = async (id: string) =>
    (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}` })).body;
  const fork = (id: string, body: unknown, query = 'wait=30') =>
    mesh.request('POST', `/invocations/${id}/fork?${query}`, { payload: body });
  const callOf = (view: { calls: { callId: string }[] }, callId: string) =>
    view.calls.find((c) => c.callId === callId) as Record<string, unknown>;

  const original = (await mesh.invoke('lead', { prompt: 'go' })).json;
  t.equal(original.output, 'noted 1 | helped 1');
  const childId = callOf(original, 't0-call1').childId as string;
  t.equal(rootOf(childId), original.id);

  t.test('a reused delegation keeps the original child, which does not run again', async (t) => {
    const [lead, child] = [await raw(original.id), await raw(childId)];
    const asked = mesh.model.of('helper').length;
    const res = await fork(original.id, { fromCallId: 't1-model' });
    t.equal(res.status, 200);
    t.equal(res.json.output, 'noted 1 | helped 1', 'the reused results reached the model');
    t.equal(mesh.model.of('helper').length, asked, 'the child was not run again');
    t.equal(notes.runs, 1);
    const call = callOf(res.json, 't0-call1');
    t.same([call.reused, call.childId, call.status], [true, childId, 'succeeded'], "the original's child");
    t.equal(await raw(original.id), lead, 'the original is unchanged');
    t.equal(await raw(childId), child, 'its child too: not re-parented');
  });

  t.test('a fork at the delegation runs a new child of its own', async (t) => {
    const asked = mesh.model.of('helper').length;
    const res = await fork(original.id, { fromCallId: 't0-call1' });
    t.equal(res.status, 200);
    t.equal(mesh.model.of('helper').length, asked + 1, 'the sub-agent ran again');
    const call = callOf(res.json, 't0-call1');
    t.notOk(call.reused);
    t.not(call.childId, childId);
    t.equal(rootOf(call.childId as string), res.json.id, "the new child is in the fork's tree");
    t.equal(res.json.output, `noted 1 | helped ${asked + 1}`);
    t.equal(res.json.treeUsage.modelCalls, 2, "the fork's tree counts its new child's call and its own");
  });

  t.test('a delegation given a result starts no child', async (t) => {
    const asked = mesh.model.of('helper').length;
    const res = await fork(original.id, { fromCallId: 't0-call1', result: { answer: 42 } });
    t.equal(res.status, 200);
    t.equal(mesh.model.of('helper').length, asked);
    const call = callOf(res.json, 't0-call1');
    t.same([call.resultGiven, call.childId, call.status], [true, undefined, 'succeeded']);
    t.equal(res.json.output, 'noted 1 | {"answer":42}');
  });

  t.test('a child node forks as a root of its own agent', async (t) => {
    const child = (await mesh.get(`/invocations/${childId}`)).json;
    const asked = mesh.model.of('helper').length;
    const res = await fork(childId, { fromCallId: 't0-model' });
    t.equal(res.status, 200);
    t.equal(res.json.agent, 'helper');
    t.equal(res.json.rootId, res.json.id);
    t.notOk(res.json.parentId, 'no parent');
    t.same(res.json.input, child.input, "the child's input");
    t.same(res.json.forkedFrom, { invocationId: childId, callId: 't0-model' });
    t.equal(mesh.model.of('helper').length, asked + 1);
    t.equal(res.json.output, `helped ${asked + 1}`);
  });

  t.test("cancelling a fork cancels its own calls, never the original's child", async (t) => {
    const child = await raw(childId);
    mesh.model.setScript((r) => ({ ...SCRIPT(r), latencyMs: 10_000 }));
    t.teardown(() => mesh.model.setScript(SCRIPT));
    const res = await fork(original.id, { fromCallId: 't1-model' }, 'wait=0');
    t.equal(res.status, 202);
    await mesh.waitForStatus(res.json.id, 'running');
    t.equal((await mesh.request('DELETE', `/invocations/${res.json.id}`)).status, 202);
    const ended = await mesh.waitForStatus(res.json.id, 'cancelled');
    t.equal(callOf(ended, 't0-call1').childId, childId);
    t.equal(await raw(childId), child, "the original's child is untouched");
  });
});

// ---------------------------------------------------------------------------------------------------
// Forks of code agents (docs/guides/durability.md): the records before the point are replayed, `ctx.memory`
// included, steps and delegations before it never run again, a given result reaches the code (a
// step's writes made inside its fn do not, since it did not run), and a decided approval keeps its
// reason.
t.test('forks of code agents: replayed records and memory, given results, reused approvals', async (t) => {
  const runs = { first: 0, second: 0, after: 0 };
  (globalThis as { forkRuns?: typeof runs }).forkRuns = runs;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fork-code-'));
  const keeper = path.join(dir, 'keeper.mjs');
  fs.writeFileSync(
    keeper,
    `export default {
  async run(input, ctx) {
    const runs = globalThis.forkRuns;
    await ctx.memory.set('seen', [input.prompt]);
    const a = await ctx.step('first', async () => {
      await ctx.memory.set('inside', 'first ran');
      return 'A' + ++runs.first;
    });
    await ctx.memory.set('seen', [...(await ctx.memory.get('seen')), a]);
    const h = await ctx.subagent('helper', { prompt: a });
    await ctx.memory.set('seen', [...(await ctx.memory.get('seen')), h.ok ? h.output : h.error.code]);
    const b = await ctx.step('second', async () => 'B' + ++runs.second);
    return { seen: await ctx.memory.get('seen'), inside: (await ctx.memory.get('inside')) ?? null, b };
  },
};
`,
  );
  const asker = path.join(dir, 'asker.mjs');
  fs.writeFileSync(
    asker,
    `export default {
  async run(input, ctx) {
    const d = await ctx.approval('deploy', { env: 'prod' });
    const n = await ctx.step('after', () => ++globalThis.forkRuns.after);
    return d.approved ? 'deployed ' + n : 'refused: ' + (d.reason ?? '-') + ' ' + n;
  },
};
`,
  );

  const mesh = await startMesh(t, {
    agentsYaml: `
  keeper: {module: '${keeper}', subagents: [helper]}
  asker: {module: '${asker}'}
  helper: {description: Helps., instructions: "@agent helper"}
`,
    script: (r) => ({ final: `helped ${r.messages.find((m) => m.role === 'user')?.content} #${r.n}` }),
  });

  const fork = (id: string, body: unknown) =>
    mesh.request('POST', `/invocations/${id}/fork?wait=30`, { payload: body });
  const raw = async (id: string) =>
    (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}` })).body;

  const original = (await mesh.invoke('keeper', { prompt: 'go' })).json;
  t.equal(original.status, 'succeeded');
  t.same(original.output, { seen: ['go', 'A1', 'helped A1 #1'], inside: 'first ran', b: 'B1' });
  t.same(
    original.calls.map((c: { callId: string; name: string }) => [c.callId, c.name]),
    [
      ['t0-call0', 'step:first'],
      ['t0-call1', 'helper'],
      ['t0-call2', 'step:second'],
    ],
  );

  t.test(
    'a fork replays the records before its point, ctx.memory included, and runs live from it',
    async (t) => {
      const before = await raw(original.id);
      const asked = mesh.model.requests.length;
      const res = await fork(original.id, { fromCallId: 't0-call2' });
      t.equal(res.status, 200);
      t.same(res.json.output, { seen: ['go', 'A1', 'helped A1 #1'], inside: 'first ran', b: 'B2' });
      t.same(
        [runs.first, runs.second],
        [1, 2],
        'the step before the point did not run again; the one at it did',
      );
      t.equal(mesh.model.requests.length, asked, 'the delegation before it was not run again');
      t.same(
        res.json.calls.map((c: { callId: string; reused?: boolean }) => [c.callId, c.reused ?? false]),
        [
          ['t0-call0', true],
          ['t0-call1', true],
          ['t0-call2', false],
        ],
      );
      t.equal(await raw(original.id), before, 'the original is unchanged');
    },
  );

  t.test('a fork at a delegation runs it again, with the memory of that point', async (t) => {
    const asked = mesh.model.requests.length;
    const res = await fork(original.id, { fromCallId: 't0-call1' });
    t.equal(mesh.model.requests.length, asked + 1);
    t.same(res.json.output.seen, ['go', 'A1', `helped A1 #${asked + 1}`]);
    t.equal(runs.first, 1);
  });

  t.test('a delegation given a result returns it to the code, structured as given', async (t) => {
    const asked = mesh.model.requests.length;
    const res = await fork(original.id, { fromCallId: 't0-call1', result: { answer: 42 } });
    t.equal(mesh.model.requests.length, asked, 'no child ran');
    t.same(res.json.output.seen, ['go', 'A1', { answer: 42 }]);
  });

  t.test("a step given a result does not run, and its fn's memory writes are not replayed", async (t) => {
    const firsts = runs.first;
    const res = await fork(original.id, { fromCallId: 't0-call0', result: 'G' });
    t.equal(res.status, 200);
    t.equal(runs.first, firsts, 'the step did not run');
    t.equal(res.json.output.seen[1], 'G', 'the given result reached the code');
    t.equal(res.json.output.inside, null, 'what its fn wrote in the original run is not there');
    t.equal(res.json.output.seen[0], 'go', 'what the code wrote before it is');
  });

  t.test('a reused approval keeps its decision and reason', async (t) => {
    const asked = (await mesh.invoke('asker', {}, 'wait=0')).json.id;
    await mesh.waitForStatus(asked, 'waiting');
    const decided = await mesh.request('POST', `/invocations/${asked}/approvals/t0-call0`, {
      payload: { approved: false, reason: 'not today' },
    });
    t.equal(decided.status, 200);
    const done = await mesh.waitForStatus(asked, 'succeeded');
    t.equal(done.output, 'refused: not today 1');
    const res = await fork(asked, { fromCallId: 't0-call1' });
    t.equal(res.json.output, 'refused: not today 2');
    t.same(res.json.pendingApprovals, [], 'nothing waits');
    const again = await mesh.request('POST', `/invocations/${asked}/fork?wait=0`, {
      payload: { fromCallId: 't0-call0' },
    });
    const waiting = await mesh.waitForStatus(again.json.id, 'waiting');
    t.equal(waiting.pendingApprovals[0]?.name, 'deploy', 'a fork at the approval asks again');
  });

  t.test(
    "a reused delegation's output is copied into the fork; a child gone already cannot be reused",
    async (t) => {
      const run = (await mesh.invoke('keeper', { prompt: 'again' })).json;
      const childId = run.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
      const first = (await fork(run.id, { fromCallId: 't0-call2' })).json;
      // Gone as when the original's retention ends: the fork's copy still holds the child's output.
      await mesh.client.del(keyLayout(mesh.prefix).invocation(rootOf(childId), childId));
      const second = await fork(first.id, { fromCallId: 't0-call2' });
      t.equal(second.status, 200);
      t.equal(second.json.output.seen[2], run.output.seen[2], 'replayed from the copy');
      const late = await fork(run.id, { fromCallId: 't0-call2' });
      t.equal(late.status, 409);
      t.equal(late.json.error.code, 'call_not_recorded');
      t.match(late.json.error.message, new RegExp(`its child invocation ${childId} is gone`));
    },
  );
});
