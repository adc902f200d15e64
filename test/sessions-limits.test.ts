// What a session may take (docs/guides/sessions.md): the time it lives after its last use
// (MESH_SESSION_TTL_SECONDS) and the bytes of history it keeps (MESH_SESSION_MAX_BYTES). Each former
// file's tests are one heading subtest below, starting and stopping its own mesh, its helpers inside it.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import type { SeenRequest } from './support/fake-model.js';
import { addRunner, listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// Sessions (docs/guides/sessions.md): a session lives MESH_SESSION_TTL_SECONDS after its last use. With a TTL of
// 2 s (MESH_SESSION_TTL_SECONDS takes whole seconds, 1 at least): the keys' TTL runs down, a new turn
// pushes it back up, and an unused session goes.
t.test("a session's TTL slides with each turn and an unused session expires", async (t) => {
  const TTL_SECONDS = 2;
  const chat = '  chat: {description: Chats., instructions: "@agent chat"}\n';
  const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;
  const roles = (r: SeenRequest) => r.messages.map((m) => `${m.role}:${m.content}`);

  t.test('the session TTL slides with each turn; an unused session expires', async (t) => {
    // The mesh's own runner and gateway keep the default TTL: this test brings its own, both with
    // the small one (MESH_SESSION_TTL_SECONDS maps to their sessionTtlSeconds).
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      runners: 0,
      script: (r) => ({ final: `answer to ${lastUser(r)}` }),
    });
    await addRunner(t, mesh, { sessionTtlSeconds: TTL_SECONDS });
    const { gateway } = await listenGateway(t, mesh, { sessionTtlSeconds: TTL_SECONDS });
    const request = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await gateway.app.inject({ method, url, ...(payload ? { payload } : {}) });
      return { status: res.statusCode, json: JSON.parse(res.body) };
    };
    const turn = (prompt: string) => request('POST', '/agents/chat/invoke?wait=30&session=short', { prompt });
    const keys = ['meta', 'invocations', 'messages'].map((k) => `mesh:{session:short}:${k}`);
    const ttls = () => Promise.all(keys.map((k) => mesh.client.pttl(k)));
    // The runner advances the session (and slides its TTL) just after the finish the answer reports.
    const advanced = () =>
      waitUntil(
        async () => (await mesh.client.hget(keys[0]!, 'current')) === '',
        10_000,
        () => 'the advance',
      );

    const first = await turn('one');
    t.equal(first.status, 200, 'the first turn runs');
    await advanced();
    const fresh = await ttls();
    t.ok(
      fresh.every((ms) => ms > 0 && ms <= TTL_SECONDS * 1000),
      `every key of the session expires within the configured TTL (${fresh} ms)`,
    );

    // Unused, the TTL runs down (by a quarter: the rest, 1.5 s, is the next turn's margin to find
    // the session still there)…
    const before = await waitUntil(
      async () => {
        const now = await ttls();
        return now.every((ms) => ms > 0 && ms < (TTL_SECONDS * 1000 * 3) / 4) ? now : undefined;
      },
      TTL_SECONDS * 1000,
      () => 'the TTL to run down by a quarter',
    );
    // …and a new turn pushes it back up: the session is still there, with its history.
    const second = await turn('two');
    t.equal(second.status, 200, 'the second turn runs');
    t.same(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:one',
      'assistant:answer to one',
      'user:two',
    ]);
    await advanced();
    const after = await ttls();
    for (const [i, key] of keys.entries()) {
      t.ok(
        after[i]! > before[i]! && after[i]! <= TTL_SECONDS * 1000,
        `${key}: the turn slid its TTL back up (${before[i]} → ${after[i]} ms)`,
      );
    }

    // Left unused, the session expires: every key goes, GET answers 404, and the id starts afresh.
    await waitUntil(
      async () => (await mesh.client.exists(...keys)) === 0,
      TTL_SECONDS * 1000 * 3,
      () => 'the session to expire',
    );
    const gone = await request('GET', '/sessions/short');
    t.equal(gone.status, 404);
    t.equal(gone.json.error.code, 'session_not_found');
    const again = await turn('three');
    t.equal(again.status, 200);
    t.same(roles(mesh.model.requests.at(-1)!), ['system:@agent chat', 'user:three'], 'no history is left');
    t.same((await request('GET', '/sessions/short')).json.invocations, [again.json.id]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Large session histories (issue 24, item 9): 30 turns of 900 KB prompts and 3 MB answers made a
// 108 MB message list; the next turn's claim read it whole and blocked Redis, GET /sessions/{id}
// answered 117 MB, and an answer was stored about five times. Now a session keeps its newest
// exchanges within MESH_SESSION_MAX_BYTES (each message within a quarter of it), the claim reads
// only that much even of an older, larger list, GET /sessions/{id} answers a page at a time, and a
// large answer's events refer to it instead of carrying it. Bytes are measured in Redis (MEMORY
// USAGE, HSTRLEN, INFO's bytes sent), never by timing.
t.test('large session histories stay within MESH_SESSION_MAX_BYTES', async (t) => {
  const MiB = 1024 * 1024;
  const keys = keyLayout('mesh');

  const mesh = await startMesh(t, {
    agentsYaml: `
  chat: {instructions: "@agent chat"}
`,
    // `big-N`: an answer of N bytes; anything else a short one.
    script: (r) => {
      const prompt = r.messages.at(-1)?.content ?? '';
      const big = /^big-(\d+)/.exec(prompt);
      return { final: big ? 'a'.repeat(Number(big[1])) : `answer to ${prompt.slice(0, 20)}` };
    },
  });

  // SAMPLES 0: every field and element counted, not five of them.
  const memory = async (key: string) =>
    Number(await mesh.client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const sentBytes = async () =>
    Number(/total_net_output_bytes:(\d+)/.exec(await mesh.client.info('stats'))?.[1] ?? Number.NaN);

  t.test('a session keeps its newest exchanges within MESH_SESSION_MAX_BYTES', async (t) => {
    for (let turn = 0; turn < 8; turn++) {
      const res = await mesh.invoke(
        'chat',
        { prompt: `big-400000 turn ${turn} ${'p'.repeat(200_000)}` },
        'session=grow',
      );
      t.equal(res.json.status, 'succeeded');
    }
    const list = await mesh.client.lrange(keys.sessionMessages('grow'), 0, -1);
    const bytes = list.reduce((n, m) => n + Buffer.byteLength(m), 0);
    t.ok(bytes <= MiB, `the stored messages hold ${bytes} bytes`);
    t.ok((await memory(keys.sessionMessages('grow'))) < 1.2 * MiB, 'and take about as much in Redis');
    t.equal(list.length % 2, 0, 'whole exchanges only');
    const newest = JSON.parse(list.at(-1)!);
    t.equal(newest.role, 'assistant');
    t.match(
      newest.content,
      /…\[truncated: 400000 bytes total, showing the first \d+\]$/,
      'cut to a quarter of the bound',
    );
    t.ok(Buffer.byteLength(newest.content) <= MiB / 4);
    const last = mesh.model.requests.at(-1)!;
    t.ok(JSON.stringify(last.messages).length < 1.5 * MiB, 'the model got the bounded history');
    t.match(last.messages.at(-2)?.content, /^a+\n…\[truncated/, 'the previous answer, as kept');
  });

  t.test('an older, larger list is read only as far as the bound, and paged', async (t) => {
    await mesh.invoke('chat', { prompt: 'hello' }, 'session=legacy');
    // Its exchange is appended by the session's advance, right after the invocation ends.
    await waitUntil(
      async () => (await mesh.client.llen(keys.sessionMessages('legacy'))) === 2,
      10_000,
      () => 'the first exchange',
    );
    // As a session stored before the byte bound: 20 exchanges of 1 MB answers (about 20 MB).
    const messages = keys.sessionMessages('legacy');
    for (let i = 0; i < 20; i++) {
      const id = `inv_legacy${i}`;
      await mesh.client.rpush(
        messages,
        JSON.stringify({ role: 'user', content: `question ${i}`, invocationId: id }),
        JSON.stringify({ role: 'assistant', content: `${i}:${'b'.repeat(1_000_000)}`, invocationId: id }),
      );
    }
    const stored = await mesh.client.llen(messages);
    t.equal(stored, 42);

    // GET pages it: each page within 1 MiB of messages, every message once, in order.
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await mesh.get(`/sessions/legacy${cursor ? `?cursor=${cursor}` : ''}`);
      t.equal(res.status, 200);
      t.ok(JSON.stringify(res.json.messages).length < 1.1 * MiB, `page ${pages} within the page bound`);
      t.same(res.json.invocations.length, 1);
      seen.push(...res.json.messages.map((m: any) => m.content.slice(0, 12)));
      cursor = res.json.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    t.equal(seen.length, 42, 'every message, once');
    t.ok(pages >= 20, `${pages} pages`);
    const two = await mesh.get('/sessions/legacy?limit=2');
    t.same(
      two.json.messages.map((m: any) => m.role),
      ['user', 'assistant'],
    );
    const afterTwo: string = two.json.nextCursor;

    // The next turn's claim reads only the bounded history: Redis sends far less than the list.
    const before = await sentBytes();
    const res = await mesh.invoke('chat', { prompt: 'next' }, 'session=legacy');
    t.equal(res.json.status, 'succeeded');
    const sent = (await sentBytes()) - before;
    // The turn's history (about 1 MiB) crosses a few times: claim, activation, view.
    t.ok(sent < 10 * MiB, `Redis sent ${sent} bytes for a turn of a ${stored}-message, 20 MB session`);
    const history = await mesh.client.hstrlen(keys.invocation(res.json.id, res.json.id), 'history');
    t.ok(history <= MiB, `the invocation's history snapshot holds ${history} bytes`);
    const asked = mesh.model.requests.at(-1)!.messages;
    t.equal(asked.at(-1)?.content, 'next');
    t.match(asked.at(-2)?.content, /^19:b+$/, 'the newest exchange of the old list came first');

    // Its advance, right after the invocation ends, trims the list to the bound; a cursor from
    // before starts at the new head.
    await waitUntil(
      async () => (await memory(messages)) < 1.2 * MiB,
      10_000,
      () => 'the advance to trim the list to the bound',
    );
    t.pass('the list is within the bound now');
    const resumed = await mesh.get(`/sessions/legacy?limit=2&cursor=${afterTwo}`);
    t.equal(resumed.status, 200);
    const head = JSON.parse((await mesh.client.lindex(messages, 0))!);
    t.equal(resumed.json.messages[0].content, head.content, 'a dropped position starts at the oldest kept');
    t.equal((await mesh.get('/sessions/legacy?cursor=bm90LWEtY3Vyc29y')).status, 400);
    t.equal((await mesh.get('/sessions/legacy?limit=0')).status, 400);
  });

  t.test('a large answer is stored once more, not four: its events refer to it', async (t) => {
    const size = 3 * 1000 * 1000;
    const res = await mesh.invoke('chat', { prompt: `big-${size}` }, 'wait=60');
    t.equal(res.json.status, 'succeeded');
    const id: string = res.json.id;
    const events = await memory(keys.events(id));
    t.ok(events < 64 * 1024, `the event log takes ${events} bytes`);
    const state = await memory(keys.invocation(id, id));
    const calls = await memory(keys.calls(id, id));
    t.ok(state + calls + events < 2.2 * size, `state ${state} + calls ${calls} + events ${events} bytes`);
    // Clients still get the whole text in both events.
    // Over a socket: the stream waits on the client's backpressure (`drain`), which app.inject's
    // simulated response never emits once 3 MB are buffered.
    const { base } = await listenGateway(t, mesh, {});
    const body = await (await fetch(`${base}/invocations/${id}/events`)).text();
    const data = body
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const modelCall = data.find((e) => e.type === 'model_call');
    t.equal(modelCall.data.content.length, size);
    t.notOk('contentRef' in modelCall.data);
    const output = data.find((e) => e.type === 'output');
    t.equal(output.data.output.length, size);
    t.same(Object.keys(output.data).sort(), ['output', 'status']);
  });
});
