import { type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import t from 'tap';
import { a2aPart, a2aSend } from './support/a2a-message.js';
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
  slow:
    description: Takes a minute.
    instructions: "@agent slow"
`;

const script: FakeScript = (r) => {
  switch (r.agent) {
    case 'quiz':
      return { final: JSON.stringify({ answer: 'four', n: 4 }) };
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

const withKey =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };

/** An A2A client of the SDK for `agent`, from its card at `url`, sending `key`. */
const connect = (agent: string, key = 'all-key', url = base) =>
  new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: withKey(key) })] }).createFromUrl(
    `${url}/a2a/${agent}/.well-known/agent-card.json`,
    '',
  );

const asTask = (r: unknown): Task => r as Task;

t.test('the agent card is public and declares the interface and bearer auth', async (t) => {
  const res = await fetch(`${base}/a2a/quiz/.well-known/agent-card.json`);
  t.equal(res.status, 200);
  const card = (await res.json()) as any;
  t.equal(card.name, 'quiz');
  t.equal(card.description, 'Answers a question with a number.');
  t.equal(card.supportedInterfaces[0].url, `${base}/a2a/quiz`);
  t.equal(card.supportedInterfaces[0].protocolBinding, 'JSONRPC');
  t.equal(card.supportedInterfaces[0].protocolVersion, '1.0');
  t.ok(card.securitySchemes.bearerAuth, 'bearer scheme declared');
  t.equal(card.skills[0].id, 'quiz');
  t.equal((await fetch(`${base}/a2a/nobody/.well-known/agent-card.json`)).status, 404);
});

t.test("an unknown agent's 404 lists the agents the key may use, as REST's does", async (t) => {
  const card = await withKey('echo-key')(`${base}/a2a/nobody/.well-known/agent-card.json`);
  t.equal(card.status, 404);
  t.strictSame(await card.json(), {
    error: { code: 'agent_not_found', message: 'No agent is named nobody (agents: echo).' },
  });
  const rest = await withKey('echo-key')(`${base}/agents/nobody`);
  t.strictSame((await rest.json()) as unknown, {
    error: { code: 'agent_not_found', message: 'No agent is named nobody (agents: echo).' },
  });
  const send = await withKey('all-key')(`${base}/a2a/nobody`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
  });
  t.equal(send.status, 404);
  t.match(await send.json(), { error: { message: 'No agent is named nobody (agents: echo, quiz, slow).' } });
  const anonymous = await fetch(`${base}/a2a/nobody/.well-known/agent-card.json`);
  t.match(
    await anonymous.json(),
    { error: { message: 'No agent is named nobody (GET /agents with an API key lists them).' } },
    'the public card route names no agent to a caller without a key',
  );
});

t.test('behind a proxy the card and the document name MESH_PUBLIC_URL, not the request origin', async (t) => {
  const { base: own } = await listenGateway(t, mesh, {
    apiKeys: 'all-key',
    publicUrl: 'https://mesh.example.com',
  });
  const card = (await (await fetch(`${own}/a2a/quiz/.well-known/agent-card.json`)).json()) as any;
  t.equal(card.supportedInterfaces[0].url, 'https://mesh.example.com/a2a/quiz');
  const doc = (await (await withKey('all-key')(`${own}/docs/json`)).json()) as any;
  t.same(
    doc.servers.map((s: { url: string }) => s.url),
    ['https://mesh.example.com'],
  );
});

t.test('a blocking send completes with the text answer in the artifact', async (t) => {
  const client = await connect('echo');
  const task = asTask(await client.sendMessage(a2aSend('hi')));
  t.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.strictSame(
    task.artifacts[0]?.parts.map((p) => p.content),
    [{ $case: 'text', value: 'hello' }],
  );
  const view = await mesh.get(`/invocations/${task.id}`);
  t.equal(view.json.status, 'succeeded', 'the task id is the invocation id');
  t.strictSame(view.json.input, { prompt: 'hi' }, 'a text part is the prompt');
});

t.test('a data part is the structured input, and structured output a data part', async (t) => {
  const client = await connect('quiz');
  const task = asTask(
    await client.sendMessage(a2aSend([a2aPart({ $case: 'data', value: { question: '2+2?' } })])),
  );
  t.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  const data = task.artifacts[0]?.parts.find((p) => p.content?.$case === 'data');
  t.strictSame(data?.content?.value, { answer: 'four', n: 4 });
  await t.rejects(
    client.sendMessage(a2aSend([a2aPart({ $case: 'data', value: { nope: 1 } })])),
    /invalid_input/,
  );
});

t.test('a stream brings status updates, then the artifact and completion', async (t) => {
  const client = await connect('echo');
  const seen: string[] = [];
  let taskId = '';
  for await (const ev of client.sendMessageStream(a2aSend('hi'))) {
    const p = ev.payload;
    if (p?.$case === 'task') taskId = p.value.id;
    if (p?.$case === 'statusUpdate') seen.push(TaskState[p.value.status!.state]);
    if (p?.$case === 'artifactUpdate') seen.push('artifact');
  }
  t.ok(taskId, 'the stream opens with the task');
  t.equal(seen.at(-1), 'TASK_STATE_COMPLETED');
  t.equal(seen.at(-2), 'artifact');
  t.notOk(seen.includes('TASK_STATE_FAILED'));
});

t.test('a second gateway on the same Redis answers GetTask', async (t) => {
  const { base: otherUrl } = await listenGateway(t, mesh, { apiKeys: 'all-key,echo-key=echo' });
  const task = asTask(await (await connect('echo')).sendMessage(a2aSend('hi')));
  const elsewhere = await connect('echo', 'all-key', otherUrl);
  const got = await elsewhere.getTask({ tenant: '', id: task.id, historyLength: undefined });
  t.equal(got.id, task.id);
  t.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.strictSame(
    got.artifacts[0]?.parts.map((p) => p.content),
    [{ $case: 'text', value: 'hello' }],
  );
});

t.test('cancelling a slow task cancels its invocation', async (t) => {
  const client = await connect('slow');
  const req = a2aSend('take your time');
  req.configuration = {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: true,
  } as never;
  const started = asTask(await client.sendMessage(req));
  await mesh.waitForStatus(started.id, 'running');
  const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
  t.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
  const view = await mesh.get(`/invocations/${started.id}`);
  t.equal(view.json.status, 'cancelled');
});

t.test('no key is a 401; a scoped key cannot reach another agent', async (t) => {
  const body = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } };
  const anon = await fetch(`${base}/a2a/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  t.equal(anon.status, 401);
  t.equal(((await anon.json()) as any).error.code, 'unauthorized');
  const scoped = await fetch(`${base}/a2a/quiz`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer echo-key' },
    body: JSON.stringify(body),
  });
  t.equal(scoped.status, 403);
  t.equal(((await scoped.json()) as any).error.code, 'forbidden');
  const echo = await connect('echo', 'echo-key');
  t.equal(asTask(await echo.sendMessage(a2aSend('hi'))).status?.state, TaskState.TASK_STATE_COMPLETED);
});

t.test('a streaming answer counts against the open-stream caps of event streams', async (t) => {
  const { base: url } = await listenGateway(t, mesh, {
    apiKeys: 'all-key,echo-key=echo',
    maxStreamsPerKey: 1,
    maxStreams: 100,
  });
  const listed = async () =>
    ((await (await withKey('all-key')(`${url}/invocations?limit=100`)).json()) as { items: unknown[] }).items
      .length;
  // The slow agent's stream stays open: it holds the key's one slot.
  const client = await connect('slow', 'all-key', url);
  const stream = client.sendMessageStream(a2aSend('hi'))[Symbol.asyncIterator]();
  const first = await stream.next();
  const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
  t.ok(taskId, 'the first stream is open');
  t.teardown(() => mesh.request('DELETE', `/invocations/${taskId}`));
  const before = await listed();
  const refused = await withKey('all-key')(`${url}/a2a/slow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendStreamingMessage', params: {} }),
  });
  t.equal(refused.status, 429, 'a second streaming answer is refused');
  t.equal(((await refused.json()) as any).error.code, 'too_many_streams');
  t.equal(await listed(), before, 'and started nothing');
  const events = await withKey('all-key')(`${url}/invocations/${taskId}/events`);
  t.equal(events.status, 429, 'so is an event stream: one count for both');
  await events.body?.cancel();
  await stream.return?.(undefined);
  await waitUntil(
    async () => {
      const res = await withKey('all-key')(`${url}/invocations/${taskId}/events`);
      await res.body?.cancel();
      return res.status === 200;
    },
    10_000,
    () => 'the closed A2A stream to free its slot',
  );
  t.pass('a closed A2A stream frees its slot');
});
