// POST /agents/{name}/invoke and GET /invocations/{id} (docs/reference/rest-api.md): 200 when the invocation ends
// within `wait`, else 202 with a Location, and the calls of the view, through the whole mesh.
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

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

t.test('an invocation that fails within the wait answers 200 with status failed and its error', async (t) => {
  const res = await mesh.invoke('broken', { prompt: 'hi' });
  t.equal(res.status, 200);
  t.equal(res.json.status, 'failed');
  t.strictSame(res.json.error, {
    code: 'model_error',
    message: 'The model endpoint answered 401: Incorrect API key provided',
  });
  t.notOk('output' in res.json);
});

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

t.test('over real HTTP the answer waits for the end, and a 202 carries its Location header', async (t) => {
  await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as AddressInfo).port}`;
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
});

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
    t.match(c, { startedAt: ISO, finishedAt: ISO, runner: String }, `${c.callId} has its times and runner`);
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
