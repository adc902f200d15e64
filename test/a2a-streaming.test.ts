// A2A SendStreamingMessage streams the root's answer as TaskArtifactUpdateEvents as it is written
// (issue 26, docs/guides/streaming.md#a2a): the SDK's own client, through the real gateway, runner
// and tool-host against the streaming fake model.
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import t from 'tap';
import { assemble, type Chunk, checkChunkedAnswer } from './support/a2a-chunks.js';
import { a2aPart, a2aSend } from './support/a2a-message.js';
import { brokenAttempt, deltaChunk, isFirstAttempt, stalledReply } from './support/broken-stream.js';
import { type FakeScript, sseEvent } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

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
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;
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
