// Remote sub-agents over A2A (docs/guides/a2a-and-remote-agents.md, issue 12): mesh A's `boss` delegates to `helper`, a
// remote entry naming mesh B's `worker` by its agent card on B's real HTTP listener (with B's API
// key, from an env-expanded header). B starts only after A already delegated: the card is fetched
// lazily, with retries. The answer comes back; B's failure is A's failed delegation with B's
// reason; cancelling A's root cancels B's task; the remote agent is listed like any sub-agent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyLayout, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh, type TestMesh } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

const portB = await freePort();
const cardUrl = `http://127.0.0.1:${portB}/a2a/worker/.well-known/agent-card.json`;

// A's boss asks helper once, then answers with what it got back (or the failure text).
const scriptA: FakeScript = (r) => {
  if (r.agent !== 'boss') return { final: 'unexpected' };
  if (turnOf(r) === 0) {
    const question = r.messages.find((m) => m.role === 'user')?.content ?? '';
    return { calls: [{ name: '_subagent_helper', args: { prompt: question } }] };
  }
  return { final: `boss got: ${toolMessagesOf(r)[0]?.content ?? ''}` };
};

// B's worker: answers, fails (a 400 from its model is not retried), takes a minute, or takes 2 s:
// twice A's watch (below), so A's child has parked for about a second before B answers.
const scriptB: FakeScript = (r) => {
  const prompt = r.messages.find((m) => m.role === 'user')?.content ?? '';
  if (prompt.includes('fail')) return { status: 400, body: { error: { message: 'worker refuses' } } };
  if (prompt.includes('slow')) return { final: 'late', latencyMs: 60_000 };
  if (prompt.includes('long')) return { final: 'worth the wait', latencyMs: 2000 };
  return { final: `four (from B, asked: ${prompt})` };
};

// A's runner watches a remote task for 1 s before it parks the child (5 s in production).
const meshA = await startMesh(t, {
  script: scriptA,
  limits: { remoteWatchMs: 1000 },
  agentsYaml: `
  boss:
    description: Delegates to the remote helper.
    instructions: "@agent boss"
    subagents: [helper]
  helper:
    description: Answers arithmetic on mesh B.
    remote:
      a2a: '${cardUrl}'
      headers: {authorization: 'Bearer \${B_KEY:-b-key}'}
`,
});

let meshB: TestMesh | undefined;
const startB = async () => {
  meshB = await startMesh(t, {
    script: scriptB,
    apiKeys: 'b-key',
    headers: { authorization: 'Bearer b-key' },
    agentsYaml: `
  worker:
    description: Answers arithmetic.
    instructions: "@agent worker"
`,
  });
  await meshB.gateway.app.listen({ port: portB, host: '127.0.0.1' });
  return meshB;
};

/** B's invocations of `worker`, newest first. */
const workerRuns = async (b: TestMesh) =>
  (await b.get('/invocations?agent=worker&limit=50')).json.items as any[];

t.test('the remote agent is a sub-agent like any other: callable, listed, ready', async (t) => {
  const boss = await meshA.get('/agents/boss');
  t.equal(boss.status, 200);
  t.strictSame(
    boss.json.callables.map((c: any) => [c.name, c.description]),
    [['_subagent_helper', 'Answers arithmetic on mesh B. This is subagent.']],
  );
  t.strictSame(boss.json.callables[0].parameters, {
    type: 'object',
    properties: { prompt: { type: 'string' } },
    required: ['prompt'],
    additionalProperties: false,
  });
  const helper = await meshA.get('/agents/helper');
  t.equal(helper.status, 200);
  t.strictSame(helper.json.callables, [], 'a remote agent has no model and no tools here');
  await waitUntil(
    async () => (await meshA.get('/readyz')).status === 200,
    30_000,
    () => 'mesh A ready (a runner serves helper)',
  );
});

t.test('a delegation started before B exists fetches the card lazily and gets the answer', async (t) => {
  const started = await meshA.invoke('boss', { prompt: 'what is 2+2?' }, 'wait=0');
  t.equal(started.status, 202);
  const id: string = started.json.id;
  // The delegation is submitted and its child has tried B (connection refused) before B starts.
  const child = await waitUntil(
    async () => {
      const view = (await meshA.get(`/invocations/${id}`)).json;
      return view.calls.find((c: any) => c.kind === 'subagent' && c.childId)?.childId as string | undefined;
    },
    30_000,
    () => 'the delegation to helper',
  );
  await waitUntil(
    async () => (await meshA.get(`/invocations/${child}`)).json.status !== 'queued',
    30_000,
    () => 'the remote child to start',
  );
  const b = await startB();
  const done = await meshA.waitForStatus(id, 'succeeded', 60_000);
  t.equal(done.output, 'boss got: four (from B, asked: what is 2+2?)');
  const delegation = done.calls.find((c: any) => c.kind === 'subagent');
  t.equal(delegation.name, 'helper');
  t.equal(delegation.status, 'succeeded');
  const childView = (await meshA.get(`/invocations/${child}`)).json;
  t.equal(childView.status, 'succeeded');
  t.equal(childView.output, 'four (from B, asked: what is 2+2?)');
  t.equal(childView.parentId, id);
  t.match(childView.calls, [{ callId: 't0-remote', kind: 'subagent', name: 'helper', status: 'succeeded' }]);
  t.equal(b.model.of('worker').length, 1, "B's worker ran once");
  const runs = await workerRuns(b);
  t.equal(runs.length, 1, 'one invocation on B');
  t.equal(meshA.model.of('boss').length, 2);
});

t.test("B's failure is A's failed delegation with B's reason", async (t) => {
  const res = await meshA.invoke('boss', { prompt: 'please fail' }, 'wait=60');
  t.equal(res.status, 200);
  t.equal(res.json.status, 'succeeded', 'the parent goes on after a failed delegation');
  t.match(
    res.json.output,
    /^boss got: Sub-agent _subagent_helper execute failed: .*task failed: model_error/,
  );
  t.match(res.json.output, /worker refuses/);
  const delegation = res.json.calls.find((c: any) => c.kind === 'subagent');
  t.equal(delegation.status, 'failed');
  const child = (await meshA.get(`/invocations/${delegation.childId}`)).json;
  t.equal(child.status, 'failed');
  t.equal(child.error.code, 'subagent_failed');
});

t.test("cancelling A's root cancels B's task", async (t) => {
  const b = meshB!;
  const before = (await workerRuns(b)).length;
  const started = await meshA.invoke('boss', { prompt: 'be slow' }, 'wait=0');
  const id: string = started.json.id;
  const task = await waitUntil(
    async () => {
      const runs = await workerRuns(b);
      return runs.length > before && runs[0].status === 'running' ? runs[0] : undefined;
    },
    30_000,
    () => "B's slow task to run",
  );
  // A's child recorded B's task id before it waits: the record carries it.
  const keys = keyLayout(meshA.prefix);
  const root = (await meshA.get(`/invocations/${id}`)).json;
  const childId = root.calls.find((c: any) => c.kind === 'subagent').childId;
  const record = await waitUntil(
    async () => {
      const raw = await meshA.client.hget(keys.calls(rootOf(id), childId), 't0-remote');
      return raw ? JSON.parse(raw) : undefined;
    },
    30_000,
    () => 'the remote call record',
  );
  t.equal(record.providerId, task.id, 'the remote task id is recorded');
  const del = await meshA.request('DELETE', `/invocations/${id}`);
  t.equal(del.status, 202);
  await meshA.waitForStatus(id, 'cancelled', 60_000);
  const remote = await b.waitForStatus(task.id, 'cancelled', 60_000, () => "B's task to be cancelled");
  t.equal(remote.status, 'cancelled');
  t.equal((await meshA.get(`/invocations/${childId}`)).json.status, 'cancelled');
});

t.test('a repeated messageId from the same caller is the same task, run once', async (t) => {
  const b = meshB!;
  const before = b.model.of('worker').length;
  const body = (rpcId: number) => ({
    jsonrpc: '2.0',
    id: rpcId,
    method: 'SendMessage',
    params: {
      message: { messageId: 'mesh-repeated-message', role: 'ROLE_USER', parts: [{ text: 'again?' }] },
      configuration: { returnImmediately: false },
    },
  });
  const send = async (rpcId: number) => {
    const res = await fetch(`http://127.0.0.1:${portB}/a2a/worker`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer b-key', 'a2a-version': '1.0' },
      body: JSON.stringify(body(rpcId)),
    });
    return (await res.json()) as any;
  };
  const [first, second] = await Promise.all([send(1), send(2)]);
  t.ok(first.result?.task?.id, JSON.stringify(first));
  t.equal(second.result?.task?.id, first.result.task.id, 'the same task both times');
  const third = await send(3);
  t.equal(third.result?.task?.id, first.result.task.id, 'also after it finished');
  t.equal(b.model.of('worker').length - before, 1, "B's worker ran once");
});

/** The child invocation of the root's one delegation, once it is submitted. */
const childOf = (id: string): Promise<string> =>
  waitUntil(
    async () => (await meshA.get(`/invocations/${id}`)).json.calls.find((c: any) => c.childId)?.childId,
    30_000,
    () => 'the delegation',
  );

t.test('a long remote task parks the child (no worker slot) and wakes it when B answers', async (t) => {
  const b = meshB!;
  const before = b.model.of('worker').length;
  const id: string = (await meshA.invoke('boss', { prompt: 'a long one' }, 'wait=0')).json.id;
  const child = await childOf(id);
  await meshA.waitForStatus(child, 'waiting', 30_000, () => 'the child to park');
  const done = await meshA.waitForStatus(id, 'succeeded', 60_000);
  t.equal(done.output, 'boss got: worth the wait');
  t.equal(b.model.of('worker').length - before, 1, "B's worker ran once");
  const recoveries = await meshA.client.hget(
    keyLayout(meshA.prefix).invocation(rootOf(id), child),
    'recoveries',
  );
  t.equal(Number(recoveries ?? 0), 0, 'parking is no crash: nothing was recovered');
});

// A runner watches a parked child's remote task in the background (ParkedWatches), so the answer
// or a cancellation wakes the child at once rather than at the end of its delay (a second here).
// The watch is a SubscribeToTask stream open at B while the child waits: it is seen there.
t.test("a parked child's remote task is watched in the background while the child waits", async (t) => {
  const b = meshB!;
  const inFlight = new Set<object>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || !req.url?.startsWith('/a2a/worker')) return;
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  };
  b.gateway.app.server.on('request', onRequest);
  t.teardown(() => b.gateway.app.server.off('request', onRequest));
  const id: string = (await meshA.invoke('boss', { prompt: 'slow, watch me' }, 'wait=0')).json.id;
  t.teardown(async () => {
    await meshA.request('DELETE', `/invocations/${id}`);
    await meshA.waitForStatus(id, 'cancelled', 60_000);
  });
  const child = await childOf(id);
  await meshA.waitForStatus(child, 'waiting', 30_000, () => 'the child to park');
  // Past the moment the activation's own requests, cut off at its watch's end, are closed at B.
  await new Promise((r) => setTimeout(r, 200));
  const watched = inFlight.size;
  t.equal((await meshA.get(`/invocations/${child}`)).json.status, 'waiting', 'the child still waits');
  t.ok(watched >= 1, `B has a request of A open while the child waits (${watched})`);
});

t.test("cancelling A's root while the child is parked cancels B's task", async (t) => {
  const b = meshB!;
  const id: string = (await meshA.invoke('boss', { prompt: 'slow again' }, 'wait=0')).json.id;
  const child = await childOf(id);
  await meshA.waitForStatus(child, 'waiting', 30_000, () => 'the child to park');
  const raw = await meshA.client.hget(keyLayout(meshA.prefix).calls(rootOf(id), child), 't0-remote');
  const taskId: string = JSON.parse(raw!).providerId;
  t.equal((await b.get(`/invocations/${taskId}`)).json.status, 'running');
  t.equal((await meshA.request('DELETE', `/invocations/${id}`)).status, 202);
  await b.waitForStatus(taskId, 'cancelled', 60_000, () => "B's task to be cancelled");
  await meshA.waitForStatus(id, 'cancelled', 60_000);
  t.equal((await meshA.get(`/invocations/${child}`)).json.status, 'cancelled');
});

t.test("the child's deadline cancels B's task and fails the delegation", async (t) => {
  const b = meshB!;
  const before = (await workerRuns(b)).length;
  // 2 s: past A's 1 s watch, so the child is parked when its deadline comes.
  const id: string = (await meshA.invoke('boss', { prompt: 'slow, past the deadline' }, 'wait=0&timeout=2'))
    .json.id;
  const child = await childOf(id);
  const failed = await meshA.waitForStatus(child, 'failed', 60_000, () => 'the child to reach its deadline');
  t.equal(failed.error.code, 'deadline_exceeded');
  const runs = await workerRuns(b);
  t.equal(runs.length, before + 1);
  await b.waitForStatus(runs[0].id, 'cancelled', 30_000, () => "B's task to be cancelled");
});

t.test('a remote agent invoked as a root answers through its own runner', async (t) => {
  const res = await meshA.invoke('helper', { prompt: 'direct?' }, 'wait=60');
  t.equal(res.status, 200);
  t.equal(res.json.status, 'succeeded');
  t.equal(res.json.output, 'four (from B, asked: direct?)');
  const bad = await meshA.invoke('helper', { question: 'no prompt' }, 'wait=0');
  t.equal(bad.status, 400, 'the gateway validates against the remote agent’s input schema');
  t.equal(bad.json.error.code, 'invalid_input');
});
