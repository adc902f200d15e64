// The agents over A2A (docs/guides/streaming.md#a2a), through the SDK's own client against a live
// gateway, runner and tool-host: agent cards, sends, streams, GetTask, cancellation and keys; the
// root's answer streamed as artifact chunks; SubscribeToTask and the remote sub-agents' watcher; and
// what a message may carry that the mesh must not act on. Each former file's tests are one heading
// subtest below, with its own mesh, started in the heading and stopped at its end, and its helpers.
import { type SendMessageRequest, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { watchRemoteTask } from '../services/agent-runner/src/loop/remote/watch-remote-task.js';
import { assemble, type Chunk, checkChunkedAnswer } from './support/a2a-chunks.js';
import { a2aPart, a2aSend } from './support/a2a-message.js';
import { brokenAttempt, deltaChunk, isFirstAttempt, stalledReply } from './support/broken-stream.js';
import { type FakeScript, sseEvent, toolMessagesOf, turnOf } from './support/fake-model.js';
import { listen, listenGateway, startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// The agents as A2A servers: each agent's public card, SendMessage with text or data parts, a
// stream of status updates, GetTask on a second gateway, CancelTask, the keys' 401 and 403, and the
// open-stream caps an A2A stream counts against.
t.test(
  'the A2A server: agent cards, blocking and streaming sends, GetTask, cancellation, keys, stream caps',
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
    const base = await listen(mesh);

    const withKey =
      (key: string): typeof fetch =>
      (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${key}`);
        return fetch(input, { ...init, headers });
      };

    /** An A2A client of the SDK for `agent`, from its card at `url`, sending `key`. */
    const connect = (agent: string, key = 'all-key', url = base) =>
      new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: withKey(key) })],
      }).createFromUrl(`${url}/a2a/${agent}/.well-known/agent-card.json`, '');

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
      t.match(await send.json(), {
        error: { message: 'No agent is named nobody (agents: echo, quiz, slow).' },
      });
      const anonymous = await fetch(`${base}/a2a/nobody/.well-known/agent-card.json`);
      t.match(
        await anonymous.json(),
        { error: { message: 'No agent is named nobody (GET /agents with an API key lists them).' } },
        'the public card route names no agent to a caller without a key',
      );
    });

    t.test(
      'behind a proxy the card and the document name MESH_PUBLIC_URL, not the request origin',
      async (t) => {
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
      },
    );

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
        ((await (await withKey('all-key')(`${url}/invocations?limit=100`)).json()) as { items: unknown[] })
          .items.length;
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
  },
);

// ---------------------------------------------------------------------------------------------------
// A2A SendStreamingMessage streams the root's answer as TaskArtifactUpdateEvents as it is written
// (issue 26, docs/guides/streaming.md#a2a): the SDK's own client, through the real gateway, runner
// and tool-host against the streaming fake model.
t.test("SendStreamingMessage streams the root's answer as artifact chunks as it is written", async (t) => {
  const ANSWER = 'one two three four five six';

  const agentsYaml = `
  teller: {description: Tells slowly., instructions: "@agent teller"}
  quiz:
    description: Answers a question with a number.
    instructions: "@agent quiz"
    input: {type: object, properties: {question: {type: string}}, required: [question], additionalProperties: false}
    output: {type: object, properties: {answer: {type: string}, n: {type: integer}}, required: [answer, n]}
  flaky: {description: Fails once mid-stream., instructions: "@agent flaky"}
  cut: {description: Breaks off mid-answer., instructions: "@agent cut"}
  stuck: {description: Stops mid-answer., instructions: "@agent stuck"}
`;

  const script: FakeScript = (r) => {
    switch (r.agent) {
      case 'quiz':
        return { final: JSON.stringify({ answer: 'four', n: 4 }), chunks: 3, chunkDelayMs: 50 };
      case 'flaky':
        // The first attempt breaks off with an error mid-stream (retried like a 5xx); the retry's
        // deltas start over with `reset: true`.
        if (isFirstAttempt(mesh.model, r)) return brokenAttempt(150);
        return { final: 'hello world', chunks: 3, chunkDelayMs: 150 };
      case 'cut':
        // Ends without a finish_reason: invalid_model_reply, not retried; the task fails.
        return {
          sse: [
            sseEvent(deltaChunk({ role: 'assistant', content: '' })),
            sseEvent(deltaChunk({ content: 'half an' })),
            sseEvent(deltaChunk({ content: ' answer' })),
          ],
          chunkDelayMs: 100,
        };
      case 'stuck':
        // Sends nothing more after its first words, until the test cancels the task.
        return stalledReply('thinking');
      case 'teller':
        // Pieces far enough apart that each is a delta of its own (MESH_DELTA_FLUSH_MS is 25).
        return { final: ANSWER, chunks: 6, chunkDelayMs: 150 };
      default:
        return { final: 'ok' };
    }
  };

  const mesh = await startMesh(t, { agentsYaml, script });
  const base = await listen(mesh);
  const connect = (agent: string) =>
    new ClientFactory({ transports: [new JsonRpcTransportFactory({})] }).createFromUrl(
      `${base}/a2a/${agent}/.well-known/agent-card.json`,
      '',
    );

  const textOf = (ev: StreamResponse): string =>
    ev.payload?.$case === 'artifactUpdate'
      ? (ev.payload.value.artifact?.parts ?? [])
          .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
          .join('')
      : '';

  t.test("the root's answer comes in chunks as it is written, assembling to the output", async (t) => {
    const client = await connect('teller');
    const chunks: Chunk[] = [];
    const states: string[] = [];
    let taskId = '';
    for await (const ev of client.sendMessageStream(a2aSend('tell me'))) {
      const p = ev.payload;
      if (p?.$case === 'task') taskId = p.value.id;
      if (p?.$case === 'statusUpdate') states.push(TaskState[p.value.status!.state]);
      if (p?.$case === 'artifactUpdate') {
        const view = await mesh.get(`/invocations/${taskId}`);
        chunks.push({
          text: textOf(ev),
          append: p.value.append,
          lastChunk: p.value.lastChunk,
          status: (view.json as { status: string }).status,
        });
        states.push(p.value.lastChunk ? 'last chunk' : 'chunk');
      }
    }
    checkChunkedAnswer(t, chunks, ANSWER);
    t.equal(states.at(-1), 'TASK_STATE_COMPLETED');
    t.equal(states.at(-2), 'last chunk', 'the last chunk comes before the final status');
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    t.strictSame(
      task.artifacts[0]?.parts.map((p) => p.content),
      [{ $case: 'text', value: ANSWER }],
    );
  });

  t.test('a structured output replaces the streamed text with the whole artifact', async (t) => {
    const client = await connect('quiz');
    const updates: { append: boolean; lastChunk: boolean; cases: string[] }[] = [];
    for await (const ev of client.sendMessageStream(
      a2aSend([a2aPart({ $case: 'data', value: { question: '2+2?' } })]),
    )) {
      const p = ev.payload;
      if (p?.$case === 'artifactUpdate')
        updates.push({
          append: p.value.append,
          lastChunk: p.value.lastChunk,
          cases: (p.value.artifact?.parts ?? []).map((x) => x.content?.$case ?? ''),
        });
    }
    t.match(updates.at(-1), { append: false, lastChunk: true, cases: ['text', 'data'] });
  });

  t.test('after a reset the text so far is sent again, not appended', async (t) => {
    const client = await connect('flaky');
    const chunks: Chunk[] = [];
    for await (const ev of client.sendMessageStream(a2aSend('go'))) {
      const p = ev.payload;
      if (p?.$case === 'artifactUpdate')
        chunks.push({ text: textOf(ev), append: p.value.append, lastChunk: p.value.lastChunk, status: '' });
    }
    t.equal(mesh.model.of('flaky').length, 2, 'the call was sent again');
    t.strictSame(
      chunks.slice(0, 2).map((c) => [c.text, c.append]),
      [
        ['draft', false],
        [' more', true],
      ],
      'the first attempt streamed',
    );
    const restart = chunks.findIndex((c, i) => i > 0 && !c.append);
    t.ok(restart > 1, 'a later chunk starts the artifact over');
    t.notMatch(chunks[restart]?.text ?? '', /draft/, "with the new attempt's text only");
    t.equal(chunks.at(-1)?.lastChunk, true);
    t.equal(assemble(chunks), 'hello world', 'the assembled artifact is the output');
  });

  t.test(
    'a task that fails or is cancelled after its answer began closes the artifact, then ends',
    async (t) => {
      for (const [agent, final] of [
        ['cut', 'TASK_STATE_FAILED'],
        ['stuck', 'TASK_STATE_CANCELED'],
      ] as const) {
        const client = await connect(agent);
        const seen: string[] = [];
        let taskId = '';
        let cancelled = agent !== 'stuck';
        for await (const ev of client.sendMessageStream(a2aSend('go'))) {
          const p = ev.payload;
          if (p?.$case === 'task') taskId = p.value.id;
          if (p?.$case === 'statusUpdate') seen.push(TaskState[p.value.status!.state]);
          if (p?.$case === 'artifactUpdate') {
            seen.push(`${p.value.lastChunk ? 'last' : 'chunk'} ${p.value.append ? '+' : '='}${textOf(ev)}`);
            if (cancelled) continue;
            cancelled = true;
            const res = await mesh.request('DELETE', `/invocations/${taskId}`);
            t.equal(res.status, 202, 'cancelled once its answer began');
          }
        }
        const chunks = seen.filter((s) => s.startsWith('chunk'));
        t.ok(chunks.length > 0, `${agent}: its answer began (${seen.join(' | ')})`);
        t.match(chunks[0], /^chunk =/, `${agent}: the first chunk starts the artifact`);
        t.strictSame(
          seen.slice(-2),
          ['last +', final],
          `${agent}: an empty last chunk closes it, then the final status`,
        );
        t.equal(seen.filter((s) => s.startsWith('last')).length, 1, `${agent}: one last chunk`);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// SubscribeToTask (docs/guides/streaming.md#a2a): a subscription on a second gateway follows a task
// to its end, streaming the root's answer from then on; a task waiting on an approval is
// input-required and ends its subscription there; and the remote sub-agents' watcher learns a
// task's end from its subscription, without busy-looping on an interrupted one.
t.test(
  "SubscribeToTask follows a task from any gateway; the remote sub-agents' watcher uses it",
  async (t) => {
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
    const base = await listen(mesh);
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
      (a.artifact?.parts ?? [])
        .map((x) => (x.content?.$case === 'text' ? String(x.content.value) : ''))
        .join('');

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
      for await (const event of client.resubscribeTask({ tenant: '', id: task.id }))
        events.push(describe(event));
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
  },
);

// ---------------------------------------------------------------------------------------------------
// What an A2A message may carry that the mesh must not act on (issue 24, items 1 and 7):
// `referenceTaskIds` (the SDK loads each named task and keeps it: 1,500 references to one large
// task took the gateway's heap), and no `contextId` (the SDK makes one up, which must name no
// session: each plain SendMessage left three session keys for 30 days).
t.test(
  'what an A2A message carries that the mesh must not act on: referenceTaskIds, no contextId',
  async (t) => {
    const big = 'x'.repeat(300_000);
    const mesh = await startMesh(t, {
      agentsYaml: `
  echo: {description: Answers., instructions: "@agent echo"}
`,
      script: (r) => ({ final: r.messages.at(-1)?.content === 'big' ? big : 'hello' }),
    });
    const base = await listen(mesh);
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({})] }).createFromUrl(
      `${base}/a2a/echo/.well-known/agent-card.json`,
      '',
    );

    t.test(
      'referenceTaskIds are never read: 1,500 references to a large task cost no Redis read',
      async (t) => {
        const large = (await client.sendMessage(a2aSend('big'))) as Task;
        t.equal(large.status?.state, TaskState.TASK_STATE_COMPLETED);
        const monitor = await monitorRedis(mesh.redis.port);
        t.teardown(() => monitor.stop());
        const req = a2aSend('hi');
        req.message!.referenceTaskIds = Array.from({ length: 1500 }, () => large.id);
        req.configuration = {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          historyLength: undefined,
          returnImmediately: true,
        } as never;
        const task = (await client.sendMessage(req)) as Task;
        t.ok(task.id && task.id !== large.id, 'the message started its own task');
        await mesh.waitForStatus(task.id, 'succeeded');
        monitor.stop();
        const reads = monitor.seen.filter((c) => c.args.some((a) => a.includes(large.id)));
        t.equal(reads.length, 0, `commands naming the referenced task: ${reads.length}`);
      },
    );

    t.test('a message without a contextId continues no session and creates none', async (t) => {
      const task = (await client.sendMessage(a2aSend('no context'))) as Task;
      t.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      const sessionKeys = await mesh.client.keys('mesh:{session:*');
      t.same(sessionKeys, [], 'no session key in Redis');
      t.not(task.contextId, '', 'the task still has a context');
      t.equal((await mesh.get(`/sessions/${task.contextId}`)).status, 404);
      const read = (await client.getTask({ tenant: '', id: task.id, historyLength: undefined })) as Task;
      t.equal(read.contextId, task.contextId, 'GetTask answers the same context');
      const named = (await client.sendMessage(a2aSend('with context', { contextId: 'conv-1' }))) as Task;
      t.equal(named.contextId, 'conv-1');
      t.same(
        (await mesh.get('/sessions/conv-1')).json.invocations,
        [named.id],
        "the client's own contextId is a session",
      );
    });
  },
);
