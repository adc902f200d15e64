// The agents as an MCP server (issue 12, docs/guides/mcp.md): the MCP SDK's own client, over Streamable
// HTTP, against POST /mcp of a live gateway with API keys: tools/list per key scope, tools/call
// with text and structured output, failures and unfinished invocations as isError results, an MCP
// cancellation cancelling the invocation (also when it reaches another gateway than the call),
// and the REST 401 without a key.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import type { FakeScript } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

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
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;

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

const textOf = (result: Record<string, unknown>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join('');
const idIn = (text: string) => /inv_[0-9a-f]{32}/.exec(text)?.[0];

t.test('tools/list offers every agent of the key as a tool with its input and output schema', async (t) => {
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
});

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

t.test('without an API key POST /mcp is 401 in the REST error shape; GET and DELETE are 405', async (t) => {
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
});

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
