// POST /agents/{name}/invoke?stream=true (docs/guides/streaming.md, "Invoke and stream"): 200
// text/event-stream at once, first a `status` event whose data is the InvocationView, then the
// tree's events with deltas, ending after the root's terminal status; refusals stay JSON; an
// Idempotency-Key duplicate joins the same stream from its start; it takes a stream slot.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';
import { openSse, type SseEvent } from './support/sse.js';
import { waitUntil } from './support/wait-until.js';

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
    t.equal(late.events[0]!.data.data.status, 'succeeded', 'a later duplicate starts with the finished view');
    t.same(
      structural(late.events).map(label),
      structural(a.events).map(label),
      'and gets the stream from its start (deltas are sent only from when a stream opens)',
    );
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
