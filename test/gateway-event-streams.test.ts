// docs/reference/bounds.md for event streams: they share the gateway's Redis connections (the count does not grow
// with open streams), their number is capped per API key and per gateway (429 too_many_streams),
// and a Last-Event-ID at or past the invocation's terminal event ends the stream at once.
import t from 'tap';
import { listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

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
  t.match((overall.body as { error: { message: string } }).error.message, /on this gateway \(at most 3\)/);
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
  t.same(await readAll(url, { 'last-event-id': queuedId! }), [whole[1]], 'resumes with the terminal event');
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
