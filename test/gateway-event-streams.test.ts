// Event streams of a whole mesh (docs/guides/streaming.md, docs/reference/bounds.md): GET
// /invocations/{id}/events over a tree, resumed with Last-Event-ID; the streams' shared Redis
// connections and their caps; POST /agents/{name}/invoke?stream=true. Each former file's tests are
// one heading subtest below, with its own mesh, started in it and stopped at its end. Delta streams
// (?deltas=true) are test/gateway-deltas.test.ts.
import { keyLayout, queueName } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { listen, listenGateway, startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { openSse, type SseEvent } from './support/sse.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// GET /invocations/{id}/events: Server-Sent Events of an invocation's whole tree, resumable with
// Last-Event-ID, ending after the requested invocation's terminal event.
t.test(
  "GET /invocations/{id}/events: a whole tree's events, resumable, ending after its terminal event",
  async (t) => {
    interface TreeEvent {
      id: string;
      event: string;
      data: { invocationId: string; parentId?: string; agent: string; type: string; data: any };
    }

    /** Reads a whole SSE response (it must end by itself) into its events. */
    async function readEvents(url: string, headers: Record<string, string> = {}): Promise<TreeEvent[]> {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      const text = await res.text();
      return text
        .split('\n\n')
        .filter((block) => block.includes('data: '))
        .map((block) => {
          const field = (name: string) =>
            block
              .split('\n')
              .find((l) => l.startsWith(`${name}: `))
              ?.slice(name.length + 2) ?? '';
          return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) };
        });
    }

    t.test(
      'the event stream shows the whole tree in order, each invocation ends with a status',
      async (t) => {
        const mesh = await startMesh(t, {
          agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
          script: (r) =>
            r.agent === 'child'
              ? { final: 'child answer', latencyMs: 300 }
              : turnOf(r) === 0
                ? { calls: [{ name: '_subagent_child', args: { prompt: 'x' } }] }
                : { final: 'parent answer' },
        });
        const base = await listen(mesh);
        const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
        const id = started.json.id as string;
        const events = await readEvents(`${base}/invocations/${id}/events`);
        const childId = events.find((e) => e.event === 'delegation_started')!.data.data.childId;
        const who = (e: TreeEvent) =>
          e.data.invocationId === id ? 'parent' : e.data.invocationId === childId ? 'child' : '?';
        const story = events.map(
          (e) => `${who(e)}:${e.event}${e.event === 'status' ? `:${e.data.data.status}` : ''}`,
        );
        t.same(story, [
          'parent:status:queued',
          'parent:status:running',
          'parent:model_call',
          'parent:delegation_started',
          'parent:status:waiting',
          'child:status:running',
          'child:model_call',
          'child:output',
          'child:status:succeeded',
          'parent:delegation_finished',
          'parent:status:running',
          'parent:model_call',
          'parent:output',
          'parent:status:succeeded',
        ]);
        for (const e of events) {
          t.equal(e.data.type, e.event, 'the SSE event name is the event type');
          t.ok(e.data.agent && e.data.invocationId, 'every event names its invocation and agent');
        }
        t.ok(
          events.filter((e) => who(e) === 'child').every((e) => e.data.parentId === id),
          "the child's events carry their parent",
        );
        t.same(events.at(-2)!.data.data, { status: 'succeeded', output: 'parent answer' });
        t.same(events.at(-1)!.data.data, { status: 'succeeded' }, 'the root ends with its terminal status');

        const resumed = await readEvents(`${base}/invocations/${id}/events`, {
          'last-event-id': events[6]!.id,
        });
        t.same(
          resumed.map((e) => e.id),
          events.slice(7).map((e) => e.id),
          'Last-Event-ID resumes right after that event',
        );

        const childOnly = await readEvents(`${base}/invocations/${childId}/events`);
        t.same(
          childOnly.map((e) => e.event),
          ['status', 'model_call', 'output', 'status'],
          "a child's stream holds its own subtree and ends with its terminal status",
        );
      },
    );

    t.test('an unknown invocation has no event stream', async (t) => {
      const mesh = await startMesh(t, { agentsYaml: '  a: {instructions: "@agent a"}\n' });
      const res = await mesh.gateway.app.inject({
        method: 'GET',
        url: '/invocations/inv_0123456789abcdef0123456789abcdef/events',
      });
      t.equal(res.statusCode, 404);
      t.equal(res.json().error.code, 'invocation_not_found');
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// docs/reference/bounds.md for event streams: they share the gateway's Redis connections (the count does not grow
// with open streams), their number is capped per API key and per gateway (429 too_many_streams),
// and a Last-Event-ID at or past the invocation's terminal event ends the stream at once.
t.test(
  'event streams share Redis connections, are capped, and end at once past the terminal event',
  async (t) => {
    // No runner: every invocation stays queued, so its stream stays open until it is cancelled.
    const mesh = await startMesh(t, { agentsYaml: '  chat: {instructions: "@agent chat"}\n', runners: 0 });

    /** Starts an invocation of chat that stays queued; returns its id. */
    async function queued(base: string, key?: string): Promise<string> {
      const res = await fetch(`${base}/agents/chat/invoke?wait=0`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ prompt: 'hi' }),
      });
      return ((await res.json()) as { id: string }).id;
    }

    interface OpenStream {
      status: number;
      body: unknown;
      close(): void;
    }

    /** Opens an event stream; a 200 is read up to its `: connected` comment and kept open. */
    async function open(base: string, id: string, headers: Record<string, string> = {}): Promise<OpenStream> {
      const abort = new AbortController();
      const res = await fetch(`${base}/invocations/${id}/events`, { headers, signal: abort.signal });
      if (res.status !== 200) return { status: res.status, body: await res.json(), close: () => undefined };
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      if (!first.startsWith(': connected')) throw new Error(`unexpected start ${first}`);
      return { status: 200, body: undefined, close: () => abort.abort() };
    }

    /** Reads a stream that must end by itself; returns its SSE event ids and names. */
    async function readAll(url: string, headers: Record<string, string> = {}): Promise<string[]> {
      const text = await (await fetch(url, { headers })).text();
      return text
        .split('\n\n')
        .filter((b) => b.startsWith('id: '))
        .map((b) => b.split('\n').slice(0, 2).join(' '));
    }

    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

    t.test('open streams are capped per API key and per gateway with 429 too_many_streams', async (t) => {
      const { base } = await listenGateway(t, mesh, {
        apiKeys: 'alpha,beta,gamma',
        maxStreamsPerKey: 2,
        maxStreams: 3,
      });
      const a = await queued(base, 'alpha');
      const b = await queued(base, 'beta');
      const streams: OpenStream[] = [];
      t.teardown(() => {
        for (const s of streams) s.close();
      });
      for (let i = 0; i < 2; i++) streams.push(await open(base, a, bearer('alpha')));
      t.same(
        streams.map((s) => s.status),
        [200, 200],
      );
      const third = await open(base, a, bearer('alpha'));
      t.equal(third.status, 429, 'a third stream of one key is refused');
      t.strictSame(third.body, {
        error: {
          code: 'too_many_streams',
          message: 'Too many open event streams for this caller (at most 2); close one and retry.',
        },
      });
      streams.push(await open(base, b, bearer('beta')));
      t.equal(streams[2]!.status, 200, 'another key has its own allowance');
      const overall = await open(base, b, bearer('beta'));
      t.equal(overall.status, 429, 'past the gateway-wide cap every key is refused');
      t.match(
        (overall.body as { error: { message: string } }).error.message,
        /on this gateway \(at most 3\)/,
      );
      streams[0]!.close();
      const again = await waitUntil(
        async () => {
          const s = await open(base, a, bearer('alpha'));
          return s.status === 200 ? s : undefined;
        },
        10_000,
        () => 'a closed stream to free its slot',
      );
      streams.push(again);
      t.pass('a closed stream frees its slot');
    });

    t.test('callers without an API key count as one caller', async (t) => {
      const { base } = await listenGateway(t, mesh, { maxStreamsPerKey: 2, maxStreams: 100 });
      const id = await queued(base);
      const streams = [await open(base, id), await open(base, id)];
      t.teardown(() => {
        for (const s of streams) s.close();
      });
      const third = await open(base, id);
      t.equal(third.status, 429);
      t.equal((third.body as { error: { code: string } }).error.code, 'too_many_streams');
    });

    t.test("the gateway's Redis connections do not grow with the number of open streams", async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const clients = async () =>
        String(await mesh.client.client('LIST'))
          .trim()
          .split('\n').length;
      const id = await queued(base);
      const streams = [await open(base, id)];
      t.teardown(() => {
        for (const s of streams) s.close();
      });
      const withOne = await clients();
      for (let i = 0; i < 20; i++) streams.push(await open(base, i % 2 ? id : await queued(base)));
      t.same(
        streams.map((s) => s.status),
        Array(21).fill(200),
      );
      t.equal(await clients(), withOne, '21 open streams use the connections one did');
    });

    t.test('a Last-Event-ID at or past the terminal event ends the stream at once', async (t) => {
      const { base } = await listenGateway(t, mesh, { heartbeatMs: 200 });
      const id = await queued(base);
      const cancelled = await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
      t.equal(cancelled.status, 202);
      const url = `${base}/invocations/${id}/events`;
      const whole = await readAll(url);
      t.same(
        whole.map((e) => e.split(' ').at(-1)),
        ['status', 'status'],
        'queued, then cancelled',
      );
      const [queuedId, terminalId] = whole.map((e) => e.split(' ')[1]!);
      t.same(
        await readAll(url, { 'last-event-id': queuedId! }),
        [whole[1]],
        'resumes with the terminal event',
      );
      t.same(await readAll(url, { 'last-event-id': terminalId! }), [], 'at the terminal event: ends at once');
      t.same(await readAll(url, { 'last-event-id': '99999999999999-0' }), [], 'past it: ends at once');
    });

    t.test('a stream resumed past the end of a running invocation ends when it ends', async (t) => {
      const { base } = await listenGateway(t, mesh, { heartbeatMs: 100 });
      const id = await queued(base);
      const read = readAll(`${base}/invocations/${id}/events`, { 'last-event-id': '99999999999999-0' });
      await new Promise((r) => setTimeout(r, 300));
      await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
      t.same(await read, [], 'it ended (without events it never reached)');
    });

    t.test('events appended after a stream opened reach it through the shared reader', async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const ids = [await queued(base), await queued(base)];
      const reads = ids.map((id) => readAll(`${base}/invocations/${id}/events`));
      await new Promise((r) => setTimeout(r, 200));
      for (const id of ids) await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
      for (const events of await Promise.all(reads)) {
        t.same(
          events.map((e) => e.split(' ').at(-1)),
          ['status', 'status'],
          'each stream got its cancellation and ended',
        );
      }
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// POST /agents/{name}/invoke?stream=true (docs/guides/streaming.md, "Invoke and stream"): 200
// text/event-stream at once, first a `status` event whose data is the InvocationView, then the
// tree's events with deltas, ending after the root's terminal status; refusals stay JSON; an
// Idempotency-Key duplicate joins the same stream from its start; it takes a stream slot.
t.test("POST /agents/{name}/invoke?stream=true: the view, then the tree's events with deltas", async (t) => {
  // A prompt saying `hold` is answered after a minute (the test cancels first); others at once.
  const mesh = await startMesh(t, {
    agentsYaml: `
  chat: {instructions: "@agent chat"}
  parent: {instructions: "@agent parent", subagents: [chat]}
`,
    script: (r) => {
      const held = JSON.stringify(r.messages).includes('hold') ? { latencyMs: 60_000 } : {};
      if (r.agent === 'parent' && turnOf(r) === 0)
        return { calls: [{ name: '_subagent_chat', args: { prompt: 'x' } }], ...held };
      return { final: `${r.agent} answer`, ...held };
    },
  });
  const keys = keyLayout(mesh.prefix);

  const invoke = (base: string, agent: string, body: unknown, query = 'stream=true', headers = {}) =>
    openSse(`${base}/agents/${agent}/invoke?${query}`, { method: 'POST', body, headers });
  const label = (e: SseEvent) =>
    `${e.data.agent}:${e.event}${e.event === 'status' ? `:${e.data.data.status}` : ''}`;

  t.test(
    'the answer starts at once with the view as a status event, and ends after the root terminal status',
    async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const s = await invoke(base, 'chat', { prompt: 'hold on' });
      t.teardown(() => s.close());
      t.equal(s.status, 200);
      t.match(s.headers['content-type'], /^text\/event-stream/);
      await s.until((e) => e.length >= 1, 'the first event');
      const first = s.events[0]!;
      t.equal(first.event, 'status');
      const id = first.data.data.id as string;
      t.match(first.data, { invocationId: id, agent: 'chat', type: 'status', rootId: id, depth: 0 });
      t.match(first.data.data, { id, agent: 'chat', input: { prompt: 'hold on' }, rootId: id });
      t.ok(
        ['queued', 'running'].includes(first.data.data.status),
        'the view is of an invocation still under way',
      );
      t.equal(first.id, '0-0_0-0', 'its id resumes the whole tree from the start');
      t.equal(await mesh.client.exists(keys.watch(id)), 1, 'the tree is watched from the start');
      await waitUntil(
        async () => mesh.model.requests.length > 0,
        30_000,
        () => 'the model call',
      );
      const view = (await mesh.get(`/invocations/${id}`)).json;
      t.equal(view.status, 'running', 'the model has not answered yet');
      // The runner's deltas (written here as a runner writes them) reach the stream as they come.
      const event = {
        invocationId: id,
        agent: 'chat',
        type: 'delta',
        at: new Date().toISOString(),
        rootId: id,
        depth: 0,
        data: { callId: 'm1', seq: 0, content: 'Hel' },
      };
      const d = await mesh.client.xadd(keys.deltas(id), 'MAXLEN', '10000', '*', 'e', JSON.stringify(event));
      await s.until((e) => e.some((x) => x.event === 'delta'), 'the delta');
      const delta = s.events.find((x) => x.event === 'delta')!;
      t.match(delta.id, new RegExp(`^\\d+-\\d+_${d}$`));
      t.same(delta.data.data, event.data);
      await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
      await s.ended;
      t.ok(s.complete(), 'the stream ended by itself');
      t.same(
        s.events.slice(1).map(label),
        ['chat:status:queued', 'chat:status:running', 'chat:delta', 'chat:status:cancelled'],
        'after the view: the tree in order, the delta where it was written',
      );
    },
  );

  t.test(
    "a tree's whole story comes after the view, and the view's id resumes it on GET …/events",
    async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const s = await invoke(base, 'parent', { prompt: 'go' });
      await s.ended;
      t.ok(s.complete());
      const [view, ...rest] = s.events;
      t.equal(view!.event, 'status');
      const id = view!.data.data.id as string;
      const structural = rest.filter((e) => e.event !== 'delta');
      t.same(structural.map(label), [
        'parent:status:queued',
        'parent:status:running',
        'parent:model_call',
        'parent:delegation_started',
        'parent:status:waiting',
        'chat:status:running',
        'chat:model_call',
        'chat:output',
        'chat:status:succeeded',
        'parent:delegation_finished',
        'parent:status:running',
        'parent:model_call',
        'parent:output',
        'parent:status:succeeded',
      ]);
      t.equal(structural.at(-2)!.data.data.output, 'parent answer');
      t.ok(
        rest.some((e) => e.event === 'delta' && e.data.agent === 'chat'),
        "the runners' deltas came with them, the child's too",
      );
      t.ok(
        rest.every((e) => /^\d+-\d+_\d+-\d+$/.test(e.id)),
        "composite ids: a position in both of the tree's streams",
      );
      const resumed = await openSse(`${base}/invocations/${id}/events?deltas=true`, {
        headers: { 'last-event-id': view!.id },
      });
      await resumed.ended;
      // Each entry by its own stream's id (a delta's is the id's second part): the interleaving of
      // an event and a delta written in the same millisecond may differ between the live stream and
      // a resume, never what each stream holds or its order.
      const own = (e: { event: string; id: string }) => {
        const [events, deltas] = e.id.split('_');
        return e.event === 'delta' ? `delta ${deltas}` : `event ${events}`;
      };
      t.same(
        resumed.events.map(own).sort(),
        rest.map(own).sort(),
        'resuming after the view gives the same events, none missing, none twice',
      );
      for (const kind of ['delta', 'event'])
        t.same(
          resumed.events.map(own).filter((x) => x.startsWith(kind)),
          rest.map(own).filter((x) => x.startsWith(kind)),
          `the ${kind}s in the same order`,
        );
    },
  );

  t.test(
    'an Idempotency-Key duplicate gets the same invocation stream from its start, view first',
    async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const headers = { 'idempotency-key': `same-${Date.now()}` };
      const [a, b] = await Promise.all([
        invoke(base, 'chat', { prompt: 'twice' }, 'stream=true', headers),
        invoke(base, 'chat', { prompt: 'twice' }, 'stream=true', headers),
      ]);
      await Promise.all([a.ended, b.ended]);
      t.equal(a.events[0]!.event, 'status');
      t.equal(b.events[0]!.event, 'status');
      t.equal(a.events[0]!.data.data.id, b.events[0]!.data.data.id, 'one invocation');
      const structural = (events: SseEvent[]) => events.slice(1).filter((e) => e.event !== 'delta');
      t.same(
        structural(a.events).map((e) => e.id.split('_')[0]),
        structural(b.events).map((e) => e.id.split('_')[0]),
        'the same structural events',
      );
      t.equal(a.events.at(-1)!.data.data.status, 'succeeded');
      const late = await invoke(base, 'chat', { prompt: 'twice' }, 'stream=true', headers);
      await late.ended;
      t.equal(
        late.events[0]!.data.data.status,
        'succeeded',
        'a later duplicate starts with the finished view',
      );
      t.same(
        structural(late.events).map(label),
        structural(a.events).map(label),
        'and gets the stream from its start (deltas are sent only from when a stream opens)',
      );
    },
  );

  t.test(
    'the tree is watched before its invocation and job exist, with one SET however many hold it',
    async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const monitor = await monitorRedis(mesh.redis.port);
      t.teardown(() => monitor.stop());
      const s = await invoke(base, 'chat', { prompt: 'hold' });
      t.teardown(() => s.close());
      await s.until((e) => e.length >= 1, 'the view');
      const id = s.events[0]!.data.data.id as string;
      await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
      await s.ended;
      monitor.stop();
      const at = (test: (args: string[]) => boolean) => monitor.seen.findIndex((c) => test(c.args));
      const watchSets = monitor.seen.filter(
        (c) => c.args[0]!.toUpperCase() === 'SET' && c.args[1] === keys.watch(id),
      );
      t.equal(watchSets.length, 1, 'the invoke and its stream hold the tree with one SET');
      const set = at((a) => a[0]!.toUpperCase() === 'SET' && a[1] === keys.watch(id));
      const created = at((a) => a.includes(keys.invocation(id, id)));
      const job = `${keys.bullPrefix}:${queueName('chat')}:${id}`;
      const added = at((a) => a.includes(job));
      t.ok(set >= 0 && created >= 0 && added >= 0, 'all three seen');
      t.ok(set < created && created < added, 'the flag first, then the invocation, then its job');
    },
  );

  t.test('refusals are JSON in the error shape, as a plain invoke', async (t) => {
    const { base } = await listenGateway(t, mesh, { maxStreamsPerKey: 1 });
    const code = async (s: Awaited<ReturnType<typeof invoke>>) => [
      s.status,
      s.headers['content-type'],
      s.body?.error?.code,
    ];
    const json = /^application\/json/;
    t.match(await code(await invoke(base, 'nobody', { prompt: 'x' })), [404, json, 'agent_not_found']);
    t.match(await code(await invoke(base, 'chat', { wrong: 1 })), [400, json, 'invalid_input']);
    const bogus = await invoke(base, 'chat', { prompt: 'x' }, 'stream=yes');
    t.match(await code(bogus), [400, json, 'invalid_input']);
    t.same(
      bogus.body.error.details.map((d: { path: string }) => d.path),
      ['/stream'],
    );
    const key = { 'idempotency-key': `k-${Date.now()}` };
    const first = await invoke(base, 'chat', { prompt: 'one' }, 'stream=true', key);
    await first.ended;
    t.match(await code(await invoke(base, 'chat', { prompt: 'two' }, 'stream=true', key)), [
      422,
      json,
      'idempotency_key_reused',
    ]);
    const held = await invoke(base, 'chat', { prompt: 'hold' });
    t.teardown(() => held.close());
    await held.until((e) => e.length >= 1, 'the view');
    const recent = await mesh.client.zcard(keys.recent());
    t.match(await code(await invoke(base, 'chat', { prompt: 'x' })), [429, json, 'too_many_streams']);
    t.equal(await mesh.client.zcard(keys.recent()), recent, 'a refused stream started nothing');
    await fetch(`${base}/invocations/${held.events[0]!.data.data.id}`, { method: 'DELETE' });
  });

  t.test('an invoke stream takes a stream slot until it ends', async (t) => {
    const { base } = await listenGateway(t, mesh, { maxStreamsPerKey: 1 });
    const held = await invoke(base, 'chat', { prompt: 'hold' });
    t.teardown(() => held.close());
    await held.until((e) => e.length >= 1, 'the view');
    const id = held.events[0]!.data.data.id as string;
    const events = await fetch(`${base}/invocations/${id}/events`);
    t.equal(events.status, 429, 'no event stream while the invoke stream holds the only slot');
    t.equal(((await events.json()) as { error: { code: string } }).error.code, 'too_many_streams');
    held.close();
    const again = await waitUntil(
      async () => {
        const res = await fetch(`${base}/invocations/${id}/events`, {
          method: 'GET',
          signal: AbortSignal.timeout(2000),
        }).catch(() => undefined);
        if (res?.status !== 200) return undefined;
        return res;
      },
      10_000,
      () => 'the closed invoke stream to free its slot',
    );
    t.equal(again.status, 200);
    await fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
    await again.text();
    const plain = await mesh.invoke('chat', { prompt: 'plain' }, 'wait=30');
    t.equal(plain.status, 200, 'a plain invoke takes no slot');
  });
});
