import { type SendMessageRequest, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { watchRemoteTask } from '../services/agent-runner/src/loop/remote/watch-remote-task.js';
import { assemble, checkChunkedAnswer } from './support/a2a-chunks.js';
import { a2aSend } from './support/a2a-message.js';
import { type FakeScript, toolMessagesOf, turnOf } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

/** A gate the `hold` tool waits on: `entered` once a call is in, `open()` lets it finish. */
function gate() {
  let enter!: () => void;
  let open!: () => void;
  const entered = new Promise<void>((r) => (enter = r));
  const opened = new Promise<void>((r) => (open = r));
  return { entered, opened, enter, open };
}
let held = gate();

const agentsYaml = `
  held:
    description: Answers once its hold tool lets go.
    instructions: "@agent held"
    tools: [hold]
  teller:
    description: Tells slowly once its hold tool lets go.
    instructions: "@agent teller"
    tools: [hold]
  asker:
    description: Charges, which needs an approval.
    instructions: "@agent asker"
    tools: [charge]
`;

const ANSWER = 'one two three four five six';

// Each agent calls its one tool, then answers with what it returned; the teller streams its answer
// slowly, in pieces far enough apart that each is a delta of its own (MESH_DELTA_FLUSH_MS is 25).
const script: FakeScript = (r) => {
  const tool = r.agent === 'asker' ? 'charge' : 'hold';
  if (turnOf(r) === 0) return { calls: [{ name: tool, args: {} }] };
  if (r.agent === 'teller') return { final: ANSWER, chunks: 6, chunkDelayMs: 150 };
  return { final: `done: ${toolMessagesOf(r)[0]?.content ?? ''}` };
};

const mesh = await startMesh(t, {
  agentsYaml,
  script,
  apiKeys: 'all-key',
  headers: { authorization: 'Bearer all-key' },
  tools: [
    {
      name: 'hold',
      description: 'Waits until the test lets go.',
      input: { type: 'object' },
      run: async () => {
        const g = held;
        g.enter();
        await g.opened;
        return 'let go';
      },
    },
    {
      name: 'charge',
      description: 'Charges money.',
      input: { type: 'object' },
      needsApproval: true,
      run: async () => 'charged',
    },
  ],
});
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;
const { base: other } = await listenGateway(t, mesh, { apiKeys: 'all-key' });

/** One A2A request a client sent: where, which method, and how it was answered. */
interface Sent {
  url: string;
  method: string;
  status: number;
  contentType: string;
  /** An event stream's text, as far as the client read it. */
  events: string;
}

/** A fetch sending the API key and recording each JSON-RPC request in `log`. */
const recording =
  (log: Sent[]): typeof fetch =>
  async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', 'Bearer all-key');
    const res = await fetch(input, { ...init, headers });
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : {};
    const sent: Sent = {
      url: String(input),
      method: body.method ?? '',
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      events: '',
    };
    log.push(sent);
    if (!res.body || !sent.contentType.startsWith('text/event-stream')) return res;
    const text = new TextDecoder();
    const copy = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent.events += text.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(copy), { status: res.status, headers: res.headers });
  };

/** An A2A client of the SDK for `agent` at gateway `url`, its requests recorded in `log`. */
const connect = (agent: string, url: string, log: Sent[] = []) =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recording(log) })],
  }).createFromUrl(`${url}/a2a/${agent}/.well-known/agent-card.json`, '');

/** A non-blocking SendMessage with one text part. */
const message = (text: string): SendMessageRequest =>
  a2aSend(text, {
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: true,
    },
  });

/** Starts `agent` on the first gateway without waiting: the task as the send answered it. */
const start = async (agent: string) =>
  (await (await connect(agent, base)).sendMessage(message('go'))) as Task;

/** An event of a task stream, in words: `task WORKING`, `status COMPLETED`, `artifact <text>`. */
const describe = (event: StreamResponse): string => {
  const p = event.payload;
  if (p?.$case === 'task') return `task ${TaskState[p.value.status!.state].replace('TASK_STATE_', '')}`;
  if (p?.$case === 'statusUpdate')
    return `status ${TaskState[p.value.status!.state].replace('TASK_STATE_', '')}`;
  if (p?.$case === 'artifactUpdate')
    return `artifact ${p.value.artifact!.parts.map((x) => (x.content?.$case === 'text' ? x.content.value : '?')).join()}`;
  return p?.$case ?? '?';
};

/** An artifact chunk's text. */
const textOf = (a: { artifact?: { parts: { content?: { $case: string; value?: unknown } }[] } }) =>
  (a.artifact?.parts ?? []).map((x) => (x.content?.$case === 'text' ? String(x.content.value) : '')).join('');

t.test('SubscribeToTask on a second gateway follows a task to completion and its artifact', async (t) => {
  held = gate();
  const task = await start('held');
  t.ok(
    [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status!.state),
    'the send answered at once',
  );
  await held.entered;
  const log: Sent[] = [];
  const elsewhere = await connect('held', other, log);
  const stream = elsewhere.resubscribeTask({ tenant: '', id: task.id })[Symbol.asyncIterator]();
  const first = await stream.next();
  t.equal(first.done, false, 'the stream opened');
  const opened = first.value as StreamResponse;
  t.equal(describe(opened), 'task WORKING', 'the subscription opens with the task as it stands');
  t.equal(opened.payload?.$case === 'task' && opened.payload.value.id, task.id, 'the same task');
  // The task cannot end before the test lets go of its tool: what follows was followed live.
  held.open();
  const events: StreamResponse[] = [];
  for (let next = await stream.next(); !next.done; next = await stream.next()) events.push(next.value);
  const artifacts = events.flatMap((e) =>
    e.payload?.$case === 'artifactUpdate'
      ? [{ append: e.payload.value.append, text: textOf(e.payload.value) }]
      : [],
  );
  t.equal(assemble(artifacts), 'done: let go', 'the artifact, in chunks (docs/guides/streaming.md#a2a)');
  t.strictSame(
    events
      .slice(-2)
      .map((e) => (e.payload?.$case === 'artifactUpdate' ? e.payload.value.lastChunk : describe(e))),
    [true, 'status COMPLETED'],
    'its last chunk, then completion, and the stream ends',
  );
  t.ok(
    log.some((s) => s.method === 'SubscribeToTask' && s.url.startsWith(`${other}/`)),
    'served by the second gateway',
  );
  t.equal((await mesh.get(`/invocations/${task.id}`)).json.status, 'succeeded');
});

t.test(
  "SubscribeToTask streams the root's answer as it is written from then on, as SendStreamingMessage does",
  async (t) => {
    held = gate();
    const task = await start('teller');
    await held.entered;
    const stream = (await connect('teller', other))
      .resubscribeTask({ tenant: '', id: task.id })
      [Symbol.asyncIterator]();
    t.equal(describe((await stream.next()).value as StreamResponse), 'task WORKING');
    await waitUntil(
      async () => (await mesh.client.exists(keyLayout(mesh.prefix).watch(task.id))) === 1,
      10_000,
      () => 'the subscription to watch the tree',
    );
    // A runner checks the watch key at most once a second per tree: let its cached "unwatched" lapse.
    await new Promise((r) => setTimeout(r, 1100));
    held.open();
    const chunks: { text: string; append: boolean; lastChunk: boolean; status: string }[] = [];
    const order: string[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) {
      const p = next.value.payload;
      if (p?.$case !== 'artifactUpdate') {
        order.push(describe(next.value));
        continue;
      }
      const view = await mesh.get(`/invocations/${task.id}`);
      chunks.push({
        text: textOf(p.value),
        append: p.value.append,
        lastChunk: p.value.lastChunk,
        status: view.json.status,
      });
      order.push(p.value.lastChunk ? 'last chunk' : 'chunk');
    }
    checkChunkedAnswer(t, chunks, ANSWER);
    t.strictSame(
      order.slice(-2),
      ['last chunk', 'status COMPLETED'],
      'the last chunk, then the final status',
    );
  },
);

t.test('a task waiting on an approval is input-required; its subscription ends there', async (t) => {
  const task = await start('asker');
  const view = await waitUntil(
    async () => {
      const v = (await mesh.get(`/invocations/${task.id}`)).json;
      return v.pendingApprovals.length > 0 ? v : undefined;
    },
    30_000,
    () => 'the approval to be asked',
  );
  const client = await connect('asker', other);
  const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
  t.equal(got.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const events: string[] = [];
  for await (const event of client.resubscribeTask({ tenant: '', id: task.id })) events.push(describe(event));
  t.strictSame(
    events,
    ['task INPUT_REQUIRED', 'status INPUT_REQUIRED'],
    'an interrupted state ends the stream',
  );
  const callId = view.pendingApprovals[0].callId;
  const decided = await mesh.request('POST', `/invocations/${task.id}/approvals/${callId}`, {
    payload: { approved: true },
  });
  t.equal(decided.status, 200);
  await mesh.waitForStatus(task.id, 'succeeded');
  const done = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
  t.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.strictSame(
    done.artifacts[0]?.parts.map((p) => p.content),
    [{ $case: 'text', value: 'done: charged' }],
  );
});

t.test("the remote sub-agents' watcher learns a task's end from its subscription", async (t) => {
  held = gate();
  const task = await start('held');
  await held.entered;
  const log: Sent[] = [];
  const client = await connect('held', other, log);
  const watching = watchRemoteTask(client, task.id, Date.now() + 60_000, new AbortController().signal);
  // The watcher subscribes, and the gateway answers with an event stream…
  await waitUntil(
    async () =>
      log.some((s) => s.method === 'SubscribeToTask' && s.contentType.startsWith('text/event-stream')),
    30_000,
    () => `a subscription (requests so far: ${JSON.stringify(log)})`,
  );
  const gets = () => log.filter((s) => s.method === 'GetTask').length;
  t.equal(gets(), 1, 'one GetTask before it subscribed, and no polling');
  held.open();
  const ended = await watching;
  t.equal(ended.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.strictSame(
    ended.artifacts[0]?.parts.map((p) => p.content),
    [{ $case: 'text', value: 'done: let go' }],
  );
  // …whose end it read there: one subscription, which carried the completion, and one GetTask
  // after it for the artifacts.
  const subscriptions = log.filter((s) => s.method === 'SubscribeToTask');
  t.equal(subscriptions.length, 1);
  t.match(subscriptions[0]!.events, /TASK_STATE_COMPLETED/, 'the completion came over the stream');
  t.equal(gets(), 2);
});

t.test('the watcher does not spin on a remote task waiting for an approval', async (t) => {
  const task = await start('asker');
  await waitUntil(
    async () => (await mesh.get(`/invocations/${task.id}`)).json.pendingApprovals.length > 0,
    30_000,
    () => 'the approval to be asked',
  );
  const log: Sent[] = [];
  const client = await connect('asker', other, log);
  const got = await watchRemoteTask(client, task.id, Date.now() + 1500, new AbortController().signal);
  t.equal(got.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'still waiting when the window closed');
  t.comment(`requests in the window: ${log.length}`);
  // Each subscription ends at once (input-required is an interrupted state): the watcher must
  // back off between looks (at least 250 ms each) rather than subscribe again straight away.
  t.ok(log.length <= 16, `a few looks, not a busy loop (${log.length} requests)`);
  await mesh.request('DELETE', `/invocations/${task.id}`);
});
