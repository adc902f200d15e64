// The agents as an MCP server (docs/guides/mcp.md), through the MCP SDK's own client against POST /mcp
// of a live gateway: what tools/list and tools/call answer, and the progress a call with a progress
// token gets while the root's answer is written. Each former file's tests are one heading subtest
// below, with its own mesh, started in the heading and stopped at its end; `textOf` is shared.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { brokenAttempt, isFirstAttempt, stalledReply } from './support/broken-stream.js';
import type { FakeScript } from './support/fake-model.js';
import { listen, listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

/** A tools/call result's text. */
const textOf = (result: Record<string, unknown>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join('');

// ---------------------------------------------------------------------------------------------------
// The agents as an MCP server (issue 12, docs/guides/mcp.md): the MCP SDK's own client, over Streamable
// HTTP, against POST /mcp of a live gateway with API keys: tools/list per key scope, tools/call
// with text and structured output, failures and unfinished invocations as isError results, an MCP
// cancellation cancelling the invocation (also when it reaches another gateway than the call),
// and the REST 401 without a key.
t.test(
  'the agents as MCP tools: tools/list and tools/call per key, failures, cancellation, 401',
  async (t) => {
    const agentsYaml = `
  echo:
    description: Answers in one word.
    instructions: "@agent echo"
  quiz:
    description: Answers a question with a number.
    instructions: "@agent quiz"
    input: {type: object, properties: {question: {type: string}}, required: [question], additionalProperties: false}
    output: {type: object, properties: {answer: {type: string}, n: {type: integer}}, required: [answer, n]}
  broken:
    description: Its model refuses every request.
    instructions: "@agent broken"
  slow:
    description: Takes a minute.
    instructions: "@agent slow"
`;

    const script: FakeScript = (r) => {
      switch (r.agent) {
        case 'quiz':
          return { final: JSON.stringify({ answer: 'four', n: 4 }) };
        case 'broken':
          return { status: 400, body: { error: { message: 'no such model' } } };
        case 'slow':
          return { final: 'late', latencyMs: 60_000 };
        default:
          return { final: 'hello' };
      }
    };

    const mesh = await startMesh(t, {
      agentsYaml,
      script,
      apiKeys: 'all-key,echo-key=echo',
      headers: { authorization: 'Bearer all-key' },
    });
    const base = await listen(mesh);

    /** An MCP client of the SDK connected to `url`'s /mcp with `key`; closed at teardown. */
    async function connect(t: Test, key: string, url = base): Promise<Client> {
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      });
      const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
      await client.connect(transport);
      t.teardown(() => client.close());
      return client;
    }

    const idIn = (text: string) => /inv_[0-9a-f]{32}/.exec(text)?.[0];

    t.test(
      'tools/list offers every agent of the key as a tool with its input and output schema',
      async (t) => {
        const client = await connect(t, 'all-key');
        const { tools } = await client.listTools();
        t.strictSame(
          tools.map((x) => x.name),
          ['echo', 'quiz', 'broken', 'slow'],
        );
        const quiz = tools.find((x) => x.name === 'quiz')!;
        t.equal(quiz.description, 'Answers a question with a number.');
        t.strictSame(quiz.inputSchema, {
          type: 'object',
          properties: { question: { type: 'string' } },
          required: ['question'],
          additionalProperties: false,
        });
        t.strictSame(quiz.outputSchema, {
          type: 'object',
          properties: { answer: { type: 'string' }, n: { type: 'integer' } },
          required: ['answer', 'n'],
        });
        const echo = tools.find((x) => x.name === 'echo')!;
        t.match(echo.inputSchema, { type: 'object', required: ['prompt'] }, 'the default prompt schema');
        t.equal(echo.outputSchema, undefined, 'no output schema, none offered');
        t.equal(client.getServerVersion()?.name, 'agentmesh');
      },
    );

    t.test('a scoped API key sees only its agents and may call no other', async (t) => {
      const client = await connect(t, 'echo-key');
      const { tools } = await client.listTools();
      t.strictSame(
        tools.map((x) => x.name),
        ['echo'],
      );
      const before = mesh.model.of('quiz').length;
      await t.rejects(client.callTool({ name: 'quiz', arguments: { question: 'x' } }), McpError);
      t.equal(mesh.model.of('quiz').length, before, 'nothing ran');
    });

    t.test(
      'an unknown tool is an invalid-params error that says so once and lists the tools the key may call',
      async (t) => {
        for (const [key, name, tools] of [
          ['all-key', 'nosuch', 'echo, quiz, broken, slow'],
          ['echo-key', 'quiz', 'echo'],
        ] as const) {
          const client = await connect(t, key);
          const error = await client.callTool({ name, arguments: {} }).catch((e: unknown) => e);
          t.type(error, McpError);
          t.equal((error as McpError).code, -32602);
          // The client prefixes `MCP error <code>: ` itself: the server's own message has no prefix.
          t.equal(
            (error as McpError).message,
            `MCP error -32602: Unknown tool: ${name}. The tools you may call: ${tools}.`,
            key,
          );
        }
      },
    );

    t.test('calling an agent answers its text output, naming the invocation', async (t) => {
      const client = await connect(t, 'all-key');
      const result = await client.callTool({ name: 'echo', arguments: { prompt: 'say hello' } });
      t.strictSame(result.content, [{ type: 'text', text: 'hello' }]);
      t.notOk(result.isError);
      const id = (result._meta as Record<string, string>)['agentmesh/invocationId']!;
      const view = (await mesh.get(`/invocations/${id}`)).json;
      t.match(view, { agent: 'echo', status: 'succeeded', input: { prompt: 'say hello' }, output: 'hello' });
    });

    t.test('structured output comes as structuredContent plus its JSON as text', async (t) => {
      const client = await connect(t, 'all-key');
      const result = await client.callTool({ name: 'quiz', arguments: { question: '2+2?' } });
      t.strictSame(result.structuredContent, { answer: 'four', n: 4 });
      t.strictSame(result.content, [{ type: 'text', text: '{"answer":"four","n":4}' }]);
      t.notOk(result.isError);
    });

    t.test('arguments that fail the input schema are an isError result and start nothing', async (t) => {
      const client = await connect(t, 'all-key');
      const before = mesh.model.of('quiz').length;
      const result = await client.callTool({ name: 'quiz', arguments: { question: 7 } });
      t.equal(result.isError, true);
      t.equal(textOf(result), 'invalid_input: /question: must be string');
      t.equal(mesh.model.of('quiz').length, before, 'nothing ran');
    });

    t.test('a failed invocation is an isError result naming it and its error', async (t) => {
      const client = await connect(t, 'all-key');
      const result = await client.callTool({ name: 'broken', arguments: { prompt: 'try' } });
      t.equal(result.isError, true);
      const id = idIn(textOf(result));
      t.ok(id, 'the text names the invocation');
      const view = (await mesh.get(`/invocations/${id}`)).json;
      t.equal(view.status, 'failed');
      t.match(textOf(result), `Invocation ${id} failed: ${view.error.code}: `);
    });

    t.test('an invocation still running when the wait ends is an isError result with its id', async (t) => {
      const short = await listenGateway(t, mesh, { apiKeys: 'all-key', mcpWaitSeconds: 1 });
      const client = await connect(t, 'all-key', short.base);
      const result = await client.callTool({ name: 'slow', arguments: { prompt: 'take your time' } });
      t.equal(result.isError, true);
      const id = idIn(textOf(result))!;
      t.match(textOf(result), `Invocation ${id} is still `);
      t.match(textOf(result), `follow it at GET /invocations/${id}`);
      const view = (await mesh.get(`/invocations/${id}`)).json;
      t.ok(['queued', 'running'].includes(view.status), `still going (${view.status})`);
      await mesh.request('DELETE', `/invocations/${id}`);
      await mesh.waitForStatus(id, 'cancelled');
    });

    /** The one `slow` invocation running, once its model call (past the `seen` ones) has arrived. */
    async function runningSlow(t: Test, seen: number): Promise<string> {
      await waitUntil(
        async () => mesh.model.of('slow').length > seen,
        30_000,
        () => 'the slow model call',
      );
      const list = (await mesh.get('/invocations?agent=slow&status=running')).json;
      t.equal(list.items.length, 1, 'the one slow invocation running');
      return list.items[0].id;
    }

    t.test('an MCP cancellation of a tools/call cancels its invocation', async (t) => {
      const client = await connect(t, 'all-key');
      const seen = mesh.model.of('slow').length;
      const abort = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: { prompt: 'cancel me' } }, undefined, {
        signal: abort.signal,
      });
      // Running: its model call has arrived.
      const id = await runningSlow(t, seen);
      abort.abort('the user changed their mind');
      await t.rejects(call, 'the client sees its request cancelled');
      const view = await mesh.waitForStatus(id, 'cancelled', 30_000);
      t.equal(view.error.code, 'cancelled');
    });

    t.test('a cancellation that reaches another gateway cancels the call where it runs', async (t) => {
      // Stateless MCP behind a load balancer: each POST may land on any gateway. The call goes to the
      // first one; the client's cancellation, with the same key and Mcp-Session-Id, to a second one.
      const second = await listenGateway(t, mesh, { apiKeys: 'all-key,echo-key=echo' });
      const sent: { method?: string; id?: string | number }[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: 'Bearer all-key' } },
        fetch: (url, init) => {
          if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
          return fetch(url, init);
        },
      });
      const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
      await client.connect(transport);
      t.teardown(() => client.close());
      const session = transport.sessionId;
      t.match(session, /^[0-9a-f]{32}$/, 'initialize handed out a session id');
      const seen = mesh.model.of('slow').length;
      // Its answer never comes (a cancelled request gets none): the client's close ends it.
      const call = client.callTool({ name: 'slow', arguments: { prompt: 'cancel me elsewhere' } });
      call.catch(() => undefined);
      const id = await runningSlow(t, seen);
      const requestId = sent.find((m) => m.method === 'tools/call')?.id;
      t.ok(requestId !== undefined, 'the tools/call request id');

      const statuses: number[] = [];
      const elsewhere = new StreamableHTTPClientTransport(new URL(`${second.base}/mcp`), {
        requestInit: { headers: { authorization: 'Bearer all-key' } },
        sessionId: session,
        fetch: async (url, init) => {
          const res = await fetch(url, init);
          statuses.push(res.status);
          return res;
        },
      });
      const canceller = new Client({ name: 'mcp-server-test', version: '1.0.0' });
      await canceller.connect(elsewhere); // a known session: no initialize
      t.teardown(() => canceller.close());
      await canceller.notification({
        method: 'notifications/cancelled',
        params: { requestId: requestId!, reason: 'the user changed their mind' },
      });
      t.strictSame(statuses, [202], 'the second gateway accepted the notification');
      const view = await mesh.waitForStatus(id, 'cancelled', 30_000);
      t.equal(view.error.code, 'cancelled');
    });

    t.test(
      'without an API key POST /mcp is 401 in the REST error shape; GET and DELETE are 405',
      async (t) => {
        const init = { jsonrpc: '2.0', id: 0, method: 'tools/list' };
        const res = await fetch(`${base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(init),
        });
        t.equal(res.status, 401);
        t.equal(res.headers.get('www-authenticate'), 'Bearer realm="agentmesh"');
        t.strictSame(await res.json(), {
          error: { code: 'unauthorized', message: 'Send an API key as Authorization: Bearer <key>.' },
        });
        for (const method of ['GET', 'DELETE']) {
          const r = await fetch(`${base}/mcp`, { method, headers: { authorization: 'Bearer all-key' } });
          t.equal(r.status, 405, `${method} is 405`);
          t.equal(r.headers.get('allow'), 'POST');
        }
      },
    );

    t.test('a batch that repeats a request id is refused before any call runs', async (t) => {
      const before = mesh.model.of('echo').length;
      const call = (id: number | string, prompt: string) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { prompt } },
      });
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer all-key',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify([
          call(1, 'a'),
          call('1', 'b'),
          { jsonrpc: '2.0', method: 'notifications/x' },
          call(1, 'c'),
        ]),
      });
      t.equal(res.status, 400);
      const body = (await res.json()) as any;
      t.equal(body.error.code, 'invalid_input');
      t.match(body.error.message, 'repeats the request id 1');
      t.strictSame(body.error.details, [
        { path: '/3/id', message: 'repeats the id of an earlier request of the batch' },
      ]);
      t.equal(mesh.model.of('echo').length, before, 'no call ran');
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// An MCP tools/call with a progress token gets notifications/progress carrying the root's text so
// far before its result (issue 26, docs/guides/streaming.md#mcp): the MCP SDK's own client, through
// the real gateway, runner and tool-host against the streaming fake model.
t.test("a tools/call with a progress token gets the root's text so far before its result", async (t) => {
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
  const base = await listen(mesh);

  async function connect(t: Test, url = base): Promise<Client> {
    const client = new Client({ name: 'mcp-progress-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    t.teardown(() => client.close());
    return client;
  }

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
});
