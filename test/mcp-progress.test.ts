// An MCP tools/call with a progress token gets notifications/progress carrying the root's text so
// far before its result (issue 26, docs/guides/streaming.md#mcp): the MCP SDK's own client, through
// the real gateway, runner and tool-host against the streaming fake model.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { brokenAttempt, isFirstAttempt, stalledReply } from './support/broken-stream.js';
import type { FakeScript } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

const ANSWER = 'one two three four five six';

const agentsYaml = `
  teller: {description: Tells slowly., instructions: "@agent teller"}
  flaky: {description: Fails once mid-stream., instructions: "@agent flaky"}
  long: {description: Tells at length., instructions: "@agent long"}
  stuck: {description: Stops mid-answer., instructions: "@agent stuck"}
`;

// 24 KiB in 12 pieces: past 16 KiB of text, a notification is larger than a 16 KiB bound.
const LONG = Array.from({ length: 12 }, (_, i) => String(i % 10).repeat(2048)).join('');

const script: FakeScript = (r) => {
  switch (r.agent) {
    case 'teller':
      // Pieces far enough apart that each is a delta of its own (MESH_DELTA_FLUSH_MS is 25: 75 ms
      // is three flush periods).
      return { final: ANSWER, chunks: 6, chunkDelayMs: 75 };
    case 'long':
      return { final: LONG, chunks: 12, chunkDelayMs: 75 };
    case 'stuck':
      // Sends nothing more after its first words, until the test cancels the invocation.
      return stalledReply('thinking');
    case 'flaky':
      // The first attempt breaks off with an error mid-stream (retried like a 5xx); the retry's
      // deltas start over with `reset: true`.
      if (isFirstAttempt(mesh.model, r)) return brokenAttempt(100);
      return { final: 'hello world', chunks: 3, chunkDelayMs: 75 };
    default:
      return { final: 'ok' };
  }
};

const mesh = await startMesh(t, { agentsYaml, script });
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;

async function connect(t: Test, url = base): Promise<Client> {
  const client = new Client({ name: 'mcp-progress-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  t.teardown(() => client.close());
  return client;
}

const textOf = (result: Record<string, unknown>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join('');

t.test("progress carries the root's text so far, counted, before the result", async (t) => {
  const client = await connect(t);
  const seen: Progress[] = [];
  let resultIn = false;
  const lateProgress: Progress[] = [];
  const result = await client.callTool({ name: 'teller', arguments: { prompt: 'tell me' } }, undefined, {
    onprogress: (p) => (resultIn ? lateProgress : seen).push(p),
  });
  resultIn = true;
  t.notOk(result.isError, 'the call succeeded');
  t.equal(textOf(result), ANSWER);
  t.ok(seen.length >= 3, `several notifications before the result (${seen.length})`);
  t.strictSame(
    seen.map((p) => p.progress),
    seen.map((_, i) => i + 1),
    'progress counts 1, 2, …',
  );
  t.ok(
    seen.every((p) => p.total === undefined),
    'no total',
  );
  t.ok(
    seen.every((p, i) => i === 0 || p.message!.startsWith(seen[i - 1]!.message!)),
    'each message is the text so far',
  );
  t.ok(seen.length < 8, 'at most one per delta (six pieces and the recorded text)');
  t.equal(seen.at(-1)?.message, ANSWER, 'the last is the whole answer');
  t.strictSame(lateProgress, [], 'nothing after the result');
});

t.test('after a reset the message is the new attempt’s text', async (t) => {
  const client = await connect(t);
  const seen: string[] = [];
  const result = await client.callTool({ name: 'flaky', arguments: { prompt: 'go' } }, undefined, {
    onprogress: (p) => seen.push(p.message ?? ''),
  });
  t.equal(textOf(result), 'hello world');
  t.equal(mesh.model.of('flaky').length, 2, 'the call was sent again');
  t.ok(seen.includes('draft more'), 'the first attempt was heard');
  const after = seen.slice(seen.indexOf('draft more') + 1);
  t.ok(after.length > 0, 'then the retry');
  t.ok(
    after.every((m) => !m.includes('draft')),
    'without the first attempt’s text',
  );
  t.equal(seen.at(-1), 'hello world');
});

t.test('without a progress token the call answers as before', async (t) => {
  const client = await connect(t);
  const result = await client.callTool({ name: 'teller', arguments: { prompt: 'again' } });
  t.equal(textOf(result), ANSWER);
});

t.test(
  'a call with progress takes a stream slot, as an event stream does (docs/reference/bounds.md)',
  async (t) => {
    const { base: url } = await listenGateway(t, mesh, { maxStreamsPerKey: 1 });
    let heard!: () => void;
    const first = new Promise<void>((r) => (heard = r));
    const holding = (await connect(t, url)).callTool(
      { name: 'stuck', arguments: { prompt: 'go' } },
      undefined,
      {
        onprogress: () => heard(),
      },
    );
    await first;
    const listed = await fetch(`${url}/invocations?agent=stuck&limit=1`);
    const id = ((await listed.json()) as { items: { id: string }[] }).items[0]!.id;
    t.teardown(() => fetch(`${url}/invocations/${id}`, { method: 'DELETE' }));
    const events = await fetch(`${url}/invocations/${id}/events`);
    const refused =
      events.status === 429
        ? ((await events.json()) as { error: { code: string } }).error.code
        : await events.body?.cancel().then(() => events.status);
    t.equal(refused, 'too_many_streams', 'no event stream while the call holds the only slot');
    const tellers = async () =>
      ((await (await fetch(`${url}/invocations?agent=teller&limit=100`)).json()) as { items: unknown[] })
        .items.length;
    const before = await tellers();
    await t.rejects(
      (await connect(t, url)).callTool({ name: 'teller', arguments: { prompt: 'x' } }, undefined, {
        onprogress: () => undefined,
      }),
      /too_many_streams/,
      'nor a second call with progress',
    );
    t.equal(await tellers(), before, 'which started nothing');
    const plain = await (await connect(t, url)).callTool({ name: 'teller', arguments: { prompt: 'x' } });
    t.equal(textOf(plain), ANSWER, 'a call without progress takes no slot');
    await fetch(`${url}/invocations/${id}`, { method: 'DELETE' });
    t.ok((await holding).isError, 'the held call ends, cancelled');
    await waitUntil(
      async () => {
        const res = await fetch(`${url}/invocations/${id}/events`);
        await res.body?.cancel();
        return res.status === 200;
      },
      10_000,
      () => 'the ended call to free its slot',
    );
  },
);

t.test('progress stays within the stream buffer bound: one past it is skipped', async (t) => {
  const bound = 16 * 1024;
  const { base: url } = await listenGateway(t, mesh, { streamBufferBytes: bound });
  const seen: Progress[] = [];
  const result = await (await connect(t, url)).callTool(
    { name: 'long', arguments: { prompt: 'go' } },
    undefined,
    {
      onprogress: (p) => seen.push(p),
    },
  );
  t.equal(textOf(result), LONG, 'the result is whole');
  t.ok(seen.length >= 3, `progress came while the text was short (${seen.length})`);
  t.strictSame(
    seen.map((p) => p.progress),
    seen.map((_, i) => i + 1),
    'progress counts the notifications sent, 1, 2, …',
  );
  t.ok(
    seen.every((p) => Buffer.byteLength(p.message ?? '') < bound),
    'none larger than the bound',
  );
  t.ok(seen.at(-1)!.message!.length < LONG.length, 'so the whole text came with the result only');
});
