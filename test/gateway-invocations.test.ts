// Invoking agents and reading invocations through a whole mesh (docs/reference/rest-api.md): the
// invoke and its wait, GET /invocations/{id} and each of its calls, the list of recent invocations,
// an agent's description against what its model receives, and Idempotency-Key with runs. Each former
// file's tests are one heading subtest below, with its own mesh, started in it and stopped at its end.
import { createHash } from 'node:crypto';
import { canonicalJson, keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { listen, startMesh } from './support/mesh.js';
import { PLANNER_AGENTS_YAML, pathInput, planner, searchInput } from './support/planner-agents.js';

// The caller of the sections with MESH_API_KEYS, and the owner hash the gateway stores for a key.
const alpha = { authorization: 'Bearer alpha-key' };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

// ---------------------------------------------------------------------------------------------------
// POST /agents/{name}/invoke and GET /invocations/{id} (docs/reference/rest-api.md): 200 when the invocation ends
// within `wait`, else 202 with a Location, and the calls of the view, through the whole mesh.
t.test(
  'POST /agents/{name}/invoke and GET /invocations/{id}: 200 within the wait, else 202 with a Location',
  async (t) => {
    const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    const ROOT_ID = /^inv_[0-9a-f]{32}$/;

    const mesh = await startMesh(t, {
      tools: [
        {
          name: 'read_file',
          description: 'Reads a file.',
          input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          run: async (args: unknown) => `contents of ${(args as { path: string }).path}`,
        },
      ],
      agentsYaml: `
  chat:
    description: Chats and delegates reading.
    instructions: "@agent chat"
    subagents: [reader]
  reader:
    description: Reads one file.
    instructions: "@agent reader"
    tools: [read_file]
    input: {type: object, properties: {path: {type: string}}, required: [path]}
    output: {type: object, properties: {answer: {type: string}}, required: [answer]}
  slow:
    description: Answers slowly.
    instructions: "@agent slow"
  broken:
    description: Its model refuses every request.
    instructions: "@agent broken"
`,
      script: (r) => {
        const last = r.messages.at(-1)?.content ?? '';
        if (r.agent === 'slow') return { final: 'late', latencyMs: 600 };
        if (r.agent === 'broken')
          return { status: 401, body: { error: { message: 'Incorrect API key provided' } } };
        if (r.agent === 'reader') {
          return turnOf(r) === 0
            ? { calls: [{ name: 'read_file', args: { path: JSON.parse(last).path } }] }
            : { final: JSON.stringify({ answer: last }) };
        }
        if (turnOf(r) === 0 && last === 'delegate') {
          return { calls: [{ name: '_subagent_reader', args: { path: 'notes.txt' } }] };
        }
        return { final: turnOf(r) === 0 ? 'hello' : `done: ${last}` };
      },
    });

    /** Polls GET /invocations/{id} until the invocation is terminal. */
    async function settled(id: string) {
      for (;;) {
        const res = await mesh.get(`/invocations/${id}`);
        if (['succeeded', 'failed', 'cancelled'].includes(res.json.status)) return res;
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    t.test('an invocation that ends within the wait answers 200 with its InvocationView', async (t) => {
      const res = await mesh.invoke('chat', { prompt: 'hi' });
      t.equal(res.status, 200);
      t.equal(res.headers.location, undefined, 'no Location for a finished invocation');
      const view = res.json;
      t.match(view, {
        id: ROOT_ID,
        agent: 'chat',
        status: 'succeeded',
        input: { prompt: 'hi' },
        output: 'hello',
        createdAt: ISO,
        startedAt: ISO,
        finishedAt: ISO,
        deadline: ISO,
      });
      t.equal(view.rootId, view.id);
      t.notOk('parentId' in view, 'a root invocation has no parent');
      t.notOk('error' in view);
      t.strictSame(view.usage, { modelCalls: 1, promptTokens: 11, completionTokens: 7 });
      t.equal(
        Date.parse(view.deadline) - Date.parse(view.createdAt),
        60_000,
        'the default timeout sets the deadline',
      );
    });

    t.test('?timeout= sets the deadline', async (t) => {
      const res = await mesh.invoke('chat', { prompt: 'hi' }, 'wait=30&timeout=5');
      t.equal(res.status, 200);
      t.equal(Date.parse(res.json.deadline) - Date.parse(res.json.createdAt), 5000);
    });

    t.test(
      'an invocation that fails within the wait answers 200 with status failed and its error',
      async (t) => {
        const res = await mesh.invoke('broken', { prompt: 'hi' });
        t.equal(res.status, 200);
        t.equal(res.json.status, 'failed');
        t.strictSame(res.json.error, {
          code: 'model_error',
          message: 'The model endpoint answered 401: Incorrect API key provided',
        });
        t.notOk('output' in res.json);
      },
    );

    t.test('?wait=0 answers 202 at once with a Location and a view still in progress', async (t) => {
      // An agent whose model answers late: a fast one may have finished by the time the view is read,
      // and a view terminal by then is answered 200 (docs/reference/rest-api.md: terminal within `wait`).
      const res = await mesh.invoke('slow', { prompt: 'hi' }, 'wait=0');
      t.equal(res.status, 202);
      t.match(res.json, { id: ROOT_ID, agent: 'slow', input: { prompt: 'hi' } });
      t.ok(['queued', 'running', 'waiting'].includes(res.json.status), res.json.status);
      t.equal(res.headers.location, `/invocations/${res.json.id}`);
      const later = await settled(res.json.id);
      t.equal(later.status, 200);
      t.match(later.json, { id: res.json.id, status: 'succeeded', output: 'late' });
    });

    t.test('a wait that runs out first answers 202 with the invocation still running', async (t) => {
      const res = await mesh.invoke('slow', { prompt: 'hi' }, 'wait=0.1');
      t.equal(res.status, 202);
      t.ok(['queued', 'running'].includes(res.json.status), res.json.status);
      t.equal(res.headers.location, `/invocations/${res.json.id}`);
      t.match((await settled(res.json.id)).json, { status: 'succeeded', output: 'late' });
    });

    t.test(
      'over real HTTP the answer waits for the end, and a 202 carries its Location header',
      async (t) => {
        const base = await listen(mesh);
        const post = (agent: string, query: string) =>
          fetch(`${base}/agents/${agent}/invoke?${query}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt: 'hi' }),
          });
        const done = await post('slow', 'wait=10');
        t.equal(done.status, 200, 'the request body being read does not end the wait');
        t.match(done.headers.get('content-type'), /^application\/json/);
        t.match(await done.json(), { status: 'succeeded', output: 'late' });
        const queued = await post('slow', 'wait=0');
        t.equal(queued.status, 202);
        const view = (await queued.json()) as { id: string };
        t.equal(queued.headers.get('location'), `/invocations/${view.id}`);
        const followed = await fetch(`${base}${queued.headers.get('location')}`);
        t.equal(followed.status, 200);
        t.match(await followed.json(), { id: view.id, agent: 'slow' });
        await settled(view.id);
      },
    );

    t.test('GET /invocations/{id} lists every call, a delegation with its child id', async (t) => {
      const res = await mesh.invoke('chat', { prompt: 'delegate' });
      t.equal(res.status, 200);
      t.equal(res.json.output, 'done: {"answer":"contents of notes.txt"}');
      const view = (await mesh.get(`/invocations/${res.json.id}`)).json;
      t.strictSame(view, res.json, 'the same view as the invoke answer');
      const calls = view.calls as Record<string, unknown>[];
      t.strictSame(
        calls.map((c) => [c.callId, c.kind, c.name, c.status]),
        [
          ['t0-model', 'model', 'default', 'succeeded'],
          ['t0-call0', 'subagent', 'reader', 'succeeded'],
          ['t1-model', 'model', 'default', 'succeeded'],
        ],
      );
      for (const c of calls) {
        t.match(
          c,
          { startedAt: ISO, finishedAt: ISO, runner: String },
          `${c.callId} has its times and runner`,
        );
      }
      t.notOk('childId' in calls[0]!, 'a model call has no child');
      const childId = calls[1]!.childId as string;
      t.match(childId, new RegExp(`^${view.id}-[0-9a-f]{16}$`));

      const child = await mesh.get(`/invocations/${childId}`);
      t.equal(child.status, 200);
      t.match(child.json, {
        id: childId,
        agent: 'reader',
        status: 'succeeded',
        input: { path: 'notes.txt' },
        output: { answer: 'contents of notes.txt' },
        parentId: view.id,
        rootId: view.id,
      });
      t.strictSame(
        (child.json.calls as Record<string, unknown>[]).map((c) => [c.callId, c.kind, c.name, c.status]),
        [
          ['t0-model', 'model', 'default', 'succeeded'],
          ['t0-call0', 'tool', 'read_file', 'succeeded'],
          ['t1-model', 'model', 'default', 'succeeded'],
        ],
      );
    });

    t.test('an unknown or malformed invocation id answers 404 invocation_not_found', async (t) => {
      for (const id of [
        'inv_0123456789abcdef0123456789abcdef',
        'inv_0123456789abcdef0123456789abcdef-0011223344556677',
        'nope',
      ]) {
        const res = await mesh.get(`/invocations/${id}`);
        t.equal(res.status, 404, id);
        t.strictSame(res.json, {
          error: { code: 'invocation_not_found', message: `No invocation has id ${id}.` },
        });
      }
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// GET /invocations/{id}/calls/{callId} (docs/guides/console.md), through the gateway of a real mesh: what each
// call did, rebuilt from the durable records, equals what the model, the tool and the child saw.
t.test(
  'GET /invocations/{id}/calls/{callId}: what each call did, rebuilt from the durable records',
  async (t) => {
    const KEY = 'key-one';
    const OTHER = 'key-two';
    const BIG = 'x'.repeat(300 * 1024);

    const userOf = (r: SeenRequest) => r.messages.find((m) => m.role === 'user')?.content;

    const lookup = {
      name: 'lookup',
      description: 'Looks a word up.',
      input: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
      run: async (args: unknown) => {
        const { word } = args as { word: string };
        return { word, meaning: `the meaning of ${word}` };
      },
    };

    t.test('each call shows what it was asked and what it gave, to its owner only', async (t) => {
      const mesh = await startMesh(t, {
        tools: [lookup],
        apiKeys: `${KEY},${OTHER}`,
        headers: { authorization: `Bearer ${KEY}` },
        limits: { maxResultBytes: 1024 * 1024 },
        agentsYaml: `
  planner:
    instructions: "@agent planner"
    tools: [lookup]
    subagents: [helper]
  helper:
    description: Helps.
    instructions: "@agent helper"
`,
        script: (r) => {
          // A child's long answer (300 KiB) reaches the planner whole (results up to 1 MiB here).
          if (r.agent === 'helper') return { final: userOf(r) === 'big' ? BIG : 'helped with care' };
          if (turnOf(r) === 0) {
            return {
              content: 'Let me look.',
              calls: [
                { name: 'lookup', args: { word: 'mesh' } },
                { name: '_subagent_helper', args: { prompt: 'help me' } },
                { name: '_subagent_helper', args: { prompt: 'big' } },
              ],
            };
          }
          return { final: `done: ${toolMessagesOf(r).length} results` };
        },
      });
      const res = await mesh.invoke('planner', { prompt: 'define mesh' });
      t.equal(res.json.status, 'succeeded', JSON.stringify(res.json));
      const id: string = res.json.id;
      const call = async (callId: string, headers?: Record<string, string>) =>
        mesh.get(`/invocations/${id}/calls/${callId}`, headers);

      t.test('a model call: the messages the model received, and its reply with tokens', async (t) => {
        const planner = mesh.model.of('planner');
        for (const turn of [0, 1]) {
          const { status, json } = await call(`t${turn}-model`);
          t.equal(status, 200);
          t.match(json, {
            callId: `t${turn}-model`,
            kind: 'model',
            name: 'default',
            status: 'succeeded',
            attempt: 1,
          });
          t.ok(json.startedAt && json.finishedAt, 'with its timings');
          // The fake model got exactly these messages (the record-rebuilt conversation is the request),
          // but for the long tool result, which the answer cuts at 256 KiB.
          const seen = JSON.parse(JSON.stringify(planner[turn]!.messages)) as { content: string | null }[];
          for (const m of seen) if (m.content === BIG) m.content = BIG.slice(0, 256 * 1024);
          t.ok(turn === 0 || seen.some((m) => m.content?.length === 256 * 1024), 'the long result was sent');
          t.same(json.request.messages, seen, `turn ${turn}`);
          t.ok(Number.isInteger(json.usage.promptTokens) && Number.isInteger(json.usage.completionTokens));
        }
        const first = (await call('t0-model')).json;
        t.equal(first.result.content, 'Let me look.');
        t.same(
          first.result.toolCalls.map((c: { name: string; arguments: string }) => [
            c.name,
            JSON.parse(c.arguments),
          ]),
          [
            ['lookup', { word: 'mesh' }],
            ['_subagent_helper', { prompt: 'help me' }],
            ['_subagent_helper', { prompt: 'big' }],
          ],
        );
        t.equal((await call('t1-model')).json.result.content, 'done: 3 results');
      });

      t.test('a tool call: its arguments and its result', async (t) => {
        const { status, json } = await call('t0-call0');
        t.equal(status, 200);
        t.match(json, { kind: 'tool', name: 'lookup', status: 'succeeded', attempt: 1 });
        t.same(json.request, { arguments: { word: 'mesh' } });
        t.same(JSON.parse(json.result.content), { word: 'mesh', meaning: 'the meaning of mesh' });
        t.notOk(json.truncated, 'nothing was cut');
      });

      t.test("a delegation: the child's id, input and output", async (t) => {
        const { json } = await call('t0-call1');
        t.match(json, { kind: 'subagent', name: 'helper', status: 'succeeded' });
        t.same(json.request.arguments, { prompt: 'help me' });
        t.same(json.request.input, { prompt: 'help me' });
        t.equal(
          json.request.childId,
          res.json.calls.find((c: { callId: string }) => c.callId === 't0-call1').childId,
        );
        t.equal(json.result.output, 'helped with care');
        t.equal(json.result.content, 'helped with care', 'the tool message the planner saw');
      });

      t.test('a child invocation answers for its own calls', async (t) => {
        const childId = (await call('t0-call1')).json.request.childId;
        const { status, json } = await mesh.get(`/invocations/${childId}/calls/t0-model`);
        t.equal(status, 200);
        const asked = mesh.model.of('helper').find((r) => userOf(r) === 'help me')!;
        t.same(json.request.messages, JSON.parse(JSON.stringify(asked.messages)));
      });

      t.test('text past 256 KiB is cut there, with truncated: true', async (t) => {
        const { json } = await call('t0-call2');
        t.equal(json.truncated, true);
        t.equal(json.result.content, BIG.slice(0, 256 * 1024), 'the tool message the planner read');
        t.equal(json.result.output, BIG.slice(0, 256 * 1024), "the child's output");
        // The model call that follows received the whole result: only the answer is cut.
        const next = (await call('t1-model')).json;
        t.equal(next.truncated, true);
        const tool = next.request.messages.find(
          (m: { tool_call_id?: string }) => m.tool_call_id === 't0-call2',
        );
        t.equal(tool.content.length, 256 * 1024);
      });

      t.test('an unknown call is call_not_found, an unknown invocation invocation_not_found', async (t) => {
        const missing = await call('t9-call9');
        t.equal(missing.status, 404);
        t.equal(missing.json.error.code, 'call_not_found');
        const unknown = await mesh.get(`/invocations/inv_${'0'.repeat(32)}/calls/t0-model`);
        t.equal(unknown.status, 404);
        t.equal(unknown.json.error.code, 'invocation_not_found');
        const malformed = await mesh.get('/invocations/nope/calls/t0-model');
        t.equal(malformed.json.error.code, 'invocation_not_found');
      });

      t.test("another key's invocation is not found; no key is unauthorized", async (t) => {
        const other = await call('t0-call0', { authorization: `Bearer ${OTHER}` });
        t.equal(other.status, 404);
        t.equal(other.json.error.code, 'invocation_not_found');
        const none = await call('t0-call0', {});
        t.equal(none.status, 401);
        t.equal(none.json.error.code, 'unauthorized');
      });

      t.test('the route is in the OpenAPI document with its answer schema', async (t) => {
        const doc = (await mesh.get('/docs/json')).json;
        const op = doc.paths['/invocations/{id}/calls/{callId}'].get;
        t.equal(op.operationId, 'getCall');
        t.equal(
          op.responses['200'].content['application/json'].schema.$ref,
          '#/components/schemas/CallDetail',
        );
        t.ok(doc.components.schemas.CallDetail.properties.request, 'CallDetail is a named component');
        t.same(op.security, [{ bearerAuth: [] }]);
      });
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// GET /invocations (docs/reference/rest-api.md): recent root invocations, newest first, filtered by agent and status,
// paged by an opaque cursor, and only the caller's own when MESH_API_KEYS is set.
t.test("GET /invocations: recent root invocations, filtered, paged, only the caller's own", async (t) => {
  const beta = { authorization: 'Bearer beta-key' };

  const mesh = await startMesh(t, {
    apiKeys: 'alpha-key,beta-key',
    headers: alpha,
    agentsYaml: `
  parent:
    instructions: "@agent parent"
    subagents: [echo]
  echo:
    instructions: "@agent echo"
  broken:
    instructions: "@agent broken"
`,
    script: (r) => {
      if (r.agent === 'broken') return { status: 400 };
      if (r.agent === 'parent' && turnOf(r) === 0)
        return { calls: [{ name: '_subagent_echo', args: { prompt: 'hi' } }] };
      return { final: 'done' };
    },
  });
  const keys = keyLayout(mesh.prefix);

  const started: { id: string; agent: string; status: string }[] = [];
  for (const [agent, auth] of [
    ['echo', alpha],
    ['parent', alpha],
    ['broken', alpha],
    ['echo', beta],
    ['echo', alpha],
    ['broken', alpha],
    ['echo', alpha],
    ['parent', beta],
  ] as const) {
    const res = await mesh.invoke(agent, { prompt: agent }, 'wait=30', auth);
    if (auth === alpha) started.push({ id: res.json.id, agent, status: res.json.status });
  }
  const newestFirst = [...started].reverse();
  const ids = (items: { id: string }[]) => items.map((i) => i.id);

  t.test(
    'GET /invocations lists root invocations newest first, without input, output and calls',
    async (t) => {
      const res = await mesh.get('/invocations');
      t.equal(res.status, 200);
      t.strictSame(ids(res.json.items), ids(newestFirst), 'no child invocation, no other key');
      t.notOk(res.json.nextCursor, 'one page');
      const first = res.json.items[0];
      t.strictSame(Object.keys(first).sort(), [
        'agent',
        'createdAt',
        'deadline',
        'finishedAt',
        'id',
        'rootId',
        'startedAt',
        'status',
        'treeUsage',
        'usage',
      ]);
      t.strictSame(first, { ...first, agent: 'echo', status: 'succeeded', rootId: first.id });
      const failed = res.json.items.find((i: { agent: string }) => i.agent === 'broken');
      t.equal(failed.status, 'failed');
      t.equal(failed.error.code, 'model_error', 'a failure carries its error');
    },
  );

  t.test("a planner's summary counts its whole tree's usage, as its view does", async (t) => {
    const planner = started.find((i) => i.agent === 'parent')!;
    const view = (await mesh.get(`/invocations/${planner.id}`)).json;
    t.equal(view.treeUsage.modelCalls, 3, "the planner's two model calls and its child's one");
    const item = (await mesh.get('/invocations?agent=parent')).json.items.find(
      (i: { id: string }) => i.id === planner.id,
    );
    t.strictSame(item.treeUsage, view.treeUsage);
    t.strictSame(item.usage, view.usage);
  });

  t.test('filters by agent and status; an unknown agent lists nothing; a bad value is 400', async (t) => {
    const echo = await mesh.get('/invocations?agent=echo');
    t.strictSame(ids(echo.json.items), ids(newestFirst.filter((i) => i.agent === 'echo')));
    const failed = await mesh.get('/invocations?status=failed');
    t.strictSame(ids(failed.json.items), ids(newestFirst.filter((i) => i.status === 'failed')));
    t.strictSame((await mesh.get('/invocations?agent=parent&status=failed')).json.items, []);
    t.strictSame((await mesh.get('/invocations?agent=nobody')).json, { items: [] });
    for (const [query, path] of [
      ['status=done', '/status'],
      ['agent=no%20such', '/agent'],
      ['cursor=%24%24', '/cursor'],
      ['cursor=bm90LWEtY3Vyc29y', '/cursor'],
      ['color=red', '/color'],
    ] as const) {
      const res = await mesh.get(`/invocations?${query}`);
      t.equal(res.status, 400, query);
      t.equal(res.json.error.code, 'invalid_input');
      t.equal(res.json.error.details[0].path, path, query);
    }
  });

  t.test('limit is 1 to 100', async (t) => {
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '']) {
      const res = await mesh.get(`/invocations?limit=${limit}`);
      t.equal(res.status, 400, limit);
      t.equal(res.json.error.details[0].path, '/limit');
    }
    t.equal((await mesh.get('/invocations?limit=100')).status, 200);
    const one = await mesh.get('/invocations?limit=1');
    t.strictSame(ids(one.json.items), [newestFirst[0]!.id]);
    t.type(one.json.nextCursor, 'string');
  });

  t.test('pages follow nextCursor without duplicates or gaps', async (t) => {
    const seen: string[] = [];
    let url = '/invocations?limit=2';
    for (let page = 0; page < 10; page++) {
      const res = await mesh.get(url);
      t.equal(res.status, 200);
      t.ok(res.json.items.length <= 2);
      seen.push(...ids(res.json.items));
      if (!res.json.nextCursor) break;
      url = `/invocations?limit=2&cursor=${res.json.nextCursor}`;
    }
    t.strictSame(seen, ids(newestFirst));
  });

  t.test('only the invocations of the calling key are listed', async (t) => {
    const res = await mesh.get('/invocations', beta);
    t.strictSame(
      res.json.items.map((i: { agent: string }) => i.agent),
      ['parent', 'echo'],
    );
    t.equal((await mesh.get('/invocations', {})).status, 401);
  });

  t.test('many invocations of one millisecond page without duplicates or gaps', async (t) => {
    // 45 roots created at the same instant: more than one batch of the recent set shares a score.
    const at = Date.now() - 60_000;
    const tied = Array.from({ length: 45 }, (_, i) => `inv_${i.toString(16).padStart(32, 'c')}`);
    const p = mesh.client.pipeline();
    for (const id of tied) {
      p.hset(keys.invocation(id, id), {
        v: '1',
        id,
        agent: 'tied',
        status: 'succeeded',
        rootId: id,
        createdAt: String(at),
        deadline: String(at + 1000),
        owner: sha('alpha-key'),
      });
      p.zadd(keys.recent(), at, id);
    }
    await p.exec();
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const res = await mesh.get(`/invocations?agent=tied&limit=7${cursor}`);
      seen.push(...ids(res.json.items));
      if (!res.json.nextCursor) break;
      cursor = `&cursor=${res.json.nextCursor}`;
    }
    t.strictSame(seen, [...tied].sort().reverse());
    const byDefault = await mesh.get('/invocations?agent=tied');
    t.equal(byDefault.json.items.length, 20, 'a page holds 20 by default');
    t.type(byDefault.json.nextCursor, 'string');
  });

  t.test('an entry whose invocation expired is skipped and removed from the set', async (t) => {
    const gone = `inv_${'f'.repeat(32)}`;
    await mesh.client.zadd(keys.recent(), Date.now(), gone);
    const res = await mesh.get('/invocations?agent=echo');
    t.notOk(ids(res.json.items).includes(gone));
    t.equal(await mesh.client.zscore(keys.recent(), gone), null, 'removed');
  });

  t.test('the OpenAPI document describes the page', async (t) => {
    const op = (await mesh.get('/docs/json')).json.paths['/invocations'].get;
    const page = op.responses['200'].content['application/json'].schema;
    t.strictSame(page.required, ['items']);
    t.ok(page.properties.nextCursor);
    t.strictSame(Object.keys(page.properties.items.items.properties).sort(), [
      'agent',
      'createdAt',
      'deadline',
      'error',
      'finishedAt',
      'forkedFrom',
      'id',
      'rootId',
      'startedAt',
      'status',
      'treeUsage',
      'usage',
    ]);
    t.strictSame(
      op.parameters.map((p: { name: string }) => p.name),
      ['agent', 'status', 'limit', 'cursor'],
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// GET /agents, /agents/{name}, /docs, /docs/json, /healthz and /metrics
// (docs/reference/rest-api.md), where runners are needed: the model receives exactly the callables
// GET /agents/{name} shows, and /readyz answers 200 (the rest is
// services/gateway/test/agents.test.ts).
t.test('GET /agents/{name} and /readyz with runners: the callables the model receives', async (t) => {
  const mesh = await startMesh(t, {
    tools: [
      { name: 'read_file', description: 'Reads a file.', input: pathInput, run: () => 'text' },
      { name: 'search', description: 'Searches the web.', input: searchInput, run: () => [] },
    ],
    agentsYaml: PLANNER_AGENTS_YAML,
  });

  t.test(
    'GET /agents/{name} describes one agent with exactly the callables its model receives',
    async (t) => {
      const res = await mesh.get('/agents/planner');
      t.equal(res.status, 200);
      t.strictSame(res.json, planner);
      const invoked = await mesh.invoke('planner', { prompt: 'plan' });
      t.equal(invoked.status, 200);
      const seen = mesh.model.of('planner')[0]!.tools;
      t.strictSame(
        seen.map((x) => ({ type: x.type, ...x.function })),
        planner.callables.map((c) => ({ type: 'function', ...c })),
        'the model received the same list, in the same order',
      );
    },
  );

  t.test('GET /readyz answers 200 when the catalogue and a runner per agent are there', async (t) => {
    const res = await mesh.get('/readyz');
    t.equal(res.status, 200);
    t.strictSame(res.json, { status: 'ready' });
  });
});

// ---------------------------------------------------------------------------------------------------
// Idempotency-Key on POST /agents/{name}/invoke (docs/reference/rest-api.md) with runs: a duplicate
// answers the same finished view and the model runs once, also under concurrent duplicates; a
// repeat honours its own ?wait=. The keys' rules without runs (422, scopes, malformed keys) are
// services/gateway/test/idempotency.test.ts.
t.test(
  'Idempotency-Key with runs: a duplicate answers the same invocation and the model runs once',
  async (t) => {
    const keyed = (key: string, auth = alpha) => ({ ...auth, 'idempotency-key': key });

    const mesh = await startMesh(t, {
      apiKeys: 'alpha-key,beta-key',
      headers: alpha,
      agentsYaml: `
  echo:
    instructions: "@agent echo"
  twin:
    instructions: "@agent twin"
  slow:
    instructions: "@agent slow"
  pair:
    instructions: "@agent pair"
    input: {type: object, properties: {a: {type: integer}, b: {type: integer}}, required: [a, b]}
`,
      script: (r) => ({ final: `${r.agent} done`, latencyMs: r.agent === 'slow' ? 400 : 0 }),
    });
    const runs = (agent: string) => mesh.model.of(agent).length;

    t.test(
      'the same Idempotency-Key twice answers the same invocation, and the model runs once',
      async (t) => {
        const first = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=30', keyed('order-1'));
        t.equal(first.status, 200);
        const second = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=30', keyed('order-1'));
        t.equal(second.status, 200);
        t.strictSame(second.json, first.json, 'the same finished view');
        t.equal(runs('echo'), 1, 'one model call');
        const pairA = await mesh.invoke('pair', { a: 1, b: 2 }, 'wait=30', keyed('pair-1'));
        const pairB = await mesh.invoke('pair', { b: 2, a: 1 }, 'wait=30', keyed('pair-1'));
        t.equal(pairB.json.id, pairA.json.id, 'key order in the body does not matter');
        t.equal(runs('pair'), 1);
      },
    );

    t.test('10 concurrent duplicates start one invocation and one run', async (t) => {
      const before = await mesh.client.zcard(keyLayout(mesh.prefix).recent());
      const all = await Promise.all(
        Array.from({ length: 10 }, () => mesh.invoke('slow', { prompt: 'once' }, 'wait=30', keyed('burst'))),
      );
      t.strictSame(
        all.map((r) => r.status),
        Array(10).fill(200),
      );
      t.equal(new Set(all.map((r) => r.json.id)).size, 1, 'one invocation id');
      t.ok(all.every((r) => r.json.status === 'succeeded' && r.json.output === 'slow done'));
      t.equal(runs('slow'), 1, 'one model call');
      t.equal(await mesh.client.zcard(keyLayout(mesh.prefix).recent()), before + 1, 'one invocation listed');
    });

    t.test('a repeated request honours its own ?wait=', async (t) => {
      const first = await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'));
      t.equal(first.status, 202);
      const quick = await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'));
      t.equal(quick.status, 202);
      t.equal(quick.headers.location, `/invocations/${first.json.id}`);
      const patient = await mesh.invoke('slow', { prompt: 'w' }, 'wait=30', keyed('waits'));
      t.equal(patient.status, 200);
      t.equal(patient.json.id, first.json.id);
      t.equal(patient.json.status, 'succeeded');
      t.equal((await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'))).status, 200, 'finished');
    });

    t.test(
      'a key claimed by a request that died before creating its invocation still starts it, once',
      async (t) => {
        // What a gateway killed between its SET NX and its create leaves behind.
        const owner = sha('alpha-key');
        const id = `inv_${'ab'.repeat(16)}`;
        const entry = {
          v: 1,
          invocationId: id,
          bodyHash: sha(canonicalJson({ prompt: 'orphan' })),
          at: Date.now(),
        };
        await mesh.client.set(
          keyLayout(mesh.prefix).idempotency(sha(`${owner}|twin|orphaned`)),
          JSON.stringify(entry),
        );
        const before = runs('twin');
        const res = await mesh.invoke('twin', { prompt: 'orphan' }, 'wait=30', keyed('orphaned'));
        t.equal(res.status, 200);
        t.equal(res.json.id, id, 'the claimed id');
        t.equal(res.json.output, 'twin done');
        t.equal(runs('twin'), before + 1);
      },
    );
  },
);
