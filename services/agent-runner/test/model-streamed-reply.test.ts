// OpenAIChatModel reading streamed replies from the scripted fake (docs/guides/streaming.md): the
// assembled reply equals the one a non-streamed answer gives, the listener hears pieces that add up
// to it, and each hostile stream ends in its code (model_timeout, invalid_model_reply) at once.
import { type ChatMessage, keyLayout, MeshError, type ModelConfig, type ModelReply } from '@agentmesh/shared';
import { type FakeScript, sseEvent, startFakeModel } from '@agentmesh/test-support/fake-model';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t from 'tap';
import { Agent } from 'undici';
import { CallDeltas } from '../src/loop/deltas/call-deltas.js';
import { WatchCheck } from '../src/loop/deltas/watch-check.js';
import { idleSignal } from '../src/loop/idle-signal.js';
import type { ReplyDelta, ReplyListener } from '../src/loop/model/chat-model.js';
import { OpenAIChatModel, type RetryPolicy } from '../src/loop/model/openai-chat-model.js';
import { TAIL_LIMITS } from '../src/loop/model/read-streamed-reply.js';

const fast: RetryPolicy = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 };
const messages: ChatMessage[] = [
  { role: 'system', content: '@agent tester' },
  { role: 'user', content: 'hello' },
];
const fake = await startFakeModel();
t.teardown(() => fake.close());
const config = (over: Partial<ModelConfig> = {}): ModelConfig => ({
  provider: 'openai',
  baseUrl: fake.url,
  apiKey: 'sk-test',
  model: 'fake-1',
  ...over,
});
const script = (s: FakeScript) => {
  fake.requests.length = 0;
  fake.setScript(s);
};

/** A listener that keeps what it heard since the last restart, and how often it restarted. */
function recorder(): ReplyListener & { deltas: ReplyDelta[]; restarts: number; assembled(): ModelReply } {
  const heard = {
    deltas: [] as ReplyDelta[],
    restarts: 0,
    delta(d: ReplyDelta) {
      heard.deltas.push(d);
    },
    restart() {
      heard.restarts++;
      heard.deltas = [];
    },
    /** The reply the deltas add up to (usage left out). */
    assembled(): ModelReply {
      let content: string | null = null;
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      for (const d of heard.deltas) {
        if (d.content !== undefined) content = (content ?? '') + d.content;
        for (const c of d.toolCalls ?? []) {
          const call = calls.get(c.index) ?? { id: '', name: '', arguments: '' };
          if (c.id) call.id = c.id;
          if (c.name) call.name = c.name;
          call.arguments += c.arguments ?? '';
          calls.set(c.index, call);
        }
      }
      const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
      return { content, toolCalls, usage: { promptTokens: 11, completionTokens: 7 } };
    },
  };
  return heard;
}

const ask = (model: OpenAIChatModel, listener?: ReplyListener) =>
  model.complete({
    messages,
    tools: [],
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    listener,
  });
const failure = async (p: Promise<unknown>): Promise<MeshError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeshError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
};

const callsReply = {
  content: 'Let me look — “ü” 😀 twice.',
  calls: [
    { name: 'lookup', args: { word: 'mesh', notes: 'x'.repeat(500) } },
    { name: '_subagent_helper', args: { prompt: 'héllo 😀' } },
  ],
};

t.test('a streamed reply is assembled into exactly the reply a non-streamed answer gives', async (t) => {
  const model = new OpenAIChatModel(config(), undefined, fast);
  for (const reply of [callsReply, { final: 'The answer, in many pieces: 😀 ü ∑.' }]) {
    script(() => ({ ...reply, plain: true }));
    const plain = await ask(model);
    for (const chunks of [1, 7, 200]) {
      script(() => ({ ...reply, chunks }));
      const listener = recorder();
      const streamed = await ask(model, listener);
      t.ok(fake.requests[0]!.stream, 'the request asked for a stream');
      t.strictSame(fake.requests[0]!.body.stream_options, { include_usage: true });
      t.strictSame(streamed, plain, `${chunks} pieces: the same reply, usage from the usage chunk`);
      t.strictSame(listener.assembled(), plain, 'the deltas add up to the reply');
      if (chunks > 1) t.ok(listener.deltas.length >= Math.min(chunks, 20), 'heard in pieces');
    }
  }
});

t.test('a provider answering one JSON completion is accepted, and heard as one delta', async (t) => {
  script(() => ({ ...callsReply, plain: true }));
  const listener = recorder();
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast), listener);
  t.equal(reply.toolCalls.length, 2);
  t.equal(listener.deltas.length, 1);
  t.strictSame(listener.assembled(), reply);
});

t.test('stream: false asks for no stream and reads the JSON answer', async (t) => {
  script(() => ({ final: 'plain' }));
  const reply = await ask(new OpenAIChatModel(config({ stream: false }), undefined, fast));
  t.equal(reply.content, 'plain');
  t.notOk(fake.requests[0]!.stream);
  t.notOk('stream' in fake.requests[0]!.body);
  t.notOk('stream_options' in fake.requests[0]!.body);
});

const chunk = (delta: unknown, finish: string | null = null) =>
  sseEvent({ choices: [{ index: 0, delta, finish_reason: finish }] });

t.test('[DONE] is not required: a stream ending after its finish_reason is a reply', async (t) => {
  script(() => ({ sse: [chunk({ content: 'hi' }), chunk({}, 'stop')] }));
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast));
  t.strictSame(reply, { content: 'hi', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 } });
});

const untilCut = (what: string) =>
  waitUntil(
    async () => fake.requests[0]?.aborted,
    10_000,
    () => `${what}: the connection cut`,
  );

t.test(
  '[DONE] answers the call: the body’s end is not waited for, and a rest that never ends is cut',
  async (t) => {
    script(() => ({ sse: [chunk({ content: 'hi' }), chunk({}, 'stop'), 'data: [DONE]\n\n'], stall: true }));
    // An idle bound far past the test's own time: nothing but [DONE] can answer the call.
    const model = new OpenAIChatModel(config(), undefined, fast, undefined, 600_000);
    const reply = await ask(model);
    t.equal(reply.content, 'hi');
    t.notOk(fake.requests[0]!.aborted, 'answered while its body is still open');
    await untilCut('after TAIL_LIMITS.ms');
    t.equal(fake.requests.length, 1, 'the reply was whole: nothing retried');
  },
);

t.test('what follows [DONE] is drained: the next call takes the same connection', async (t) => {
  // The body's end comes 20 ms after its [DONE], in a write of its own, as providers may send it:
  // read, not cut.
  script(() => ({ sse: [chunk({ content: 'again' }, 'stop'), 'data: [DONE]\n\n'], chunkDelayMs: 20 }));
  const agent = new Agent({ connections: 1 });
  t.teardown(() => agent.close());
  const model = new OpenAIChatModel(config(), agent, fast);
  t.equal((await ask(model)).content, 'again');
  t.equal((await ask(model)).content, 'again');
  t.equal(fake.requests.length, 2);
  t.equal(fake.requests[1]!.remotePort, fake.requests[0]!.remotePort, 'one connection for both');
});

t.test('a rest after [DONE] past its byte bound is cut', async (t) => {
  const limits = { ...TAIL_LIMITS };
  t.teardown(() => Object.assign(TAIL_LIMITS, limits));
  TAIL_LIMITS.ms = 600_000; // only the bytes can cut it
  const tail = Array.from({ length: 8 }, () => `: ${'x'.repeat(TAIL_LIMITS.bytes / 4)}\n\n`);
  script(() => ({ sse: [chunk({}, 'stop'), 'data: [DONE]\n\n', ...tail], chunkDelayMs: 5, stall: true }));
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast, undefined, 600_000));
  t.equal(reply.content, null);
  await untilCut('past TAIL_LIMITS.bytes');
});

t.test('odd framing: CRLF and CR line ends, comments, multi-line data, pieces cut mid-line', async (t) => {
  const events = [
    ': keep-alive\r\n\r\n',
    'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\r\n\r\n',
    'data: {"choices":[{"index":0,\ndata: "delta":{"content":"b"}}]}\r\r',
    'event: message\ndata:{"choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"stop"}]}\n\n',
  ].join('');
  // Cut every 5 characters: lines, CRLFs and the UTF-8 of the text split across writes.
  const pieces = events.match(/[\s\S]{1,5}/g)!;
  script(() => ({ sse: pieces, chunkDelayMs: 1 }));
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast));
  t.equal(reply.content, 'abc');
});

t.test('a stream that goes quiet fails with model_timeout after its retries', async (t) => {
  script(() => ({ sse: [chunk({ content: 'I was saying' })], stall: true }));
  const listener = recorder();
  const model = new OpenAIChatModel(config(), undefined, fast, undefined, 300);
  const error = await failure(ask(model, listener));
  t.equal(error.code, 'model_timeout');
  t.equal(fake.requests.length, 2, 'retried as a timeout is');
  t.equal(listener.restarts, 1, 'the retry told the listener to start over');
});

t.test('a model that never answers at all fails with model_timeout too', async (t) => {
  script(() => ({ final: 'late', latencyMs: 5000 }));
  const model = new OpenAIChatModel(config(), undefined, { ...fast, maxAttempts: 1 }, undefined, 300);
  t.equal((await failure(ask(model))).code, 'model_timeout');
});

t.test('a data line that is not JSON fails with invalid_model_reply, not retried', async (t) => {
  script(() => ({ sse: [chunk({ content: 'fine' }), 'data: {not json\n\n', chunk({}, 'stop')] }));
  const error = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
  t.equal(error.code, 'invalid_model_reply');
  t.match(error.message, /not JSON/);
  t.equal(fake.requests.length, 1);
});

t.test('a stream ending before any finish_reason fails with invalid_model_reply', async (t) => {
  for (const sse of [
    [chunk({ content: 'half an ans' })],
    [chunk({ content: 'x' }), 'data: [DONE]\n\n'],
    [],
  ]) {
    script(() => ({ sse }));
    const error = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
    t.equal(error.code, 'invalid_model_reply');
    t.match(error.message, /ended before a finish_reason/);
  }
});

t.test('a streamed reply past the byte bound is cut off while it streams', async (t) => {
  const piece = chunk({ content: 'y'.repeat(1000) });
  script(() => ({ sse: Array.from({ length: 200 }, () => piece), chunkDelayMs: 1, stall: true }));
  const model = new OpenAIChatModel(config(), undefined, fast, 10_000);
  const error = await failure(ask(model));
  t.equal(error.code, 'invalid_model_reply');
  t.equal(error.message, 'The model reply exceeds 10000 bytes.');
  t.equal(fake.requests.length, 1);
  // The connection was cut: the server saw its client go before it had written everything.
  await new Promise((r) => setTimeout(r, 50));
  t.ok(fake.requests[0]!.aborted, 'the model saw the connection cut');
});

t.test('one event without a line end, larger than the bound, fails before it is held in full', async (t) => {
  script(() => ({ sse: Array.from({ length: 100 }, () => 'z'.repeat(1000)), chunkDelayMs: 1, stall: true }));
  const model = new OpenAIChatModel(config(), undefined, fast, 10_000);
  t.equal((await failure(ask(model))).code, 'invalid_model_reply');
});

t.test('a provider error inside the stream is retried, then model_unavailable', async (t) => {
  script(() => ({ sse: [sseEvent({ error: { message: 'overloaded' } })] }));
  const listener = recorder();
  const error = await failure(ask(new OpenAIChatModel(config(), undefined, fast), listener));
  t.equal(error.code, 'model_unavailable');
  t.match(error.message, /overloaded/);
  t.equal(fake.requests.length, 2);
});

t.test('after a failed attempt the retry starts over and its reply is the one returned', async (t) => {
  script((r) =>
    r.n === 1
      ? { sse: [chunk({ content: 'first try, cut' }), sseEvent({ error: { message: 'lost' } })] }
      : { final: 'second try', chunks: 4 },
  );
  const listener = recorder();
  const reply = await ask(new OpenAIChatModel(config(), undefined, fast), listener);
  t.equal(reply.content, 'second try');
  t.equal(listener.restarts, 1);
  t.equal(listener.assembled().content, 'second try', 'what was heard since the restart is the reply');
});

t.test('shapes a stream may not have are malformed replies', async (t) => {
  const cases = [
    ['data: 42\n\n', /not an object/],
    [sseEvent({ choices: {} }), /not a list/],
    [chunk({ content: 7 }), /content is not a string/],
    [chunk({ tool_calls: 'x' }), /tool_calls is not a list/],
    [chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, 'tool_calls'), /function\.name/],
  ] as const;
  for (const [event, why] of cases) {
    script(() => ({ sse: [event, chunk({}, 'stop')] }));
    const error = await failure(ask(new OpenAIChatModel(config(), undefined, fast)));
    t.equal(error.code, 'invalid_model_reply');
    t.match(error.message, why);
  }
});

t.test('with stream: false no idle clock runs: a slow whole answer is waited for', async (t) => {
  script(() => ({ final: 'slow but whole', latencyMs: 600 }));
  const model = new OpenAIChatModel(config({ stream: false }), undefined, fast, undefined, 200);
  t.equal((await ask(model)).content, 'slow but whole');
});

t.test('a call’s first delta is written at once, before the rest of what came with it is read', async (t) => {
  const watch = new WatchCheck(undefined as never, keyLayout('t'));
  watch.seed('root', true);
  const published: { seq: number; content?: string }[] = [];
  const sink = {
    watch,
    settings: { flushMs: 25 },
    publish: async (_who: unknown, data: unknown) => void published.push({ ...(data as { seq: number }) }),
  };
  const deltas = new CallDeltas(sink, { id: 'inv', agent: 'a', rootId: 'root' }, 'm1', false);
  // A reply in one piece: its pieces reach the listener one after the other, with no wait between.
  deltas.delta({ content: 'Hel' });
  t.same(
    published,
    [{ callId: 'm1', seq: 0, content: 'Hel' }],
    'the first piece is written before the next is read',
  );
  deltas.delta({ content: 'lo' });
  deltas.delta({ content: '!' });
  t.equal(published.length, 1, 'the pieces after it are coalesced');
  await deltas.end();
  t.same(
    published.map((d) => [d.seq, d.content]),
    [
      [0, 'Hel'],
      [1, 'lo!'],
    ],
    'the rest at the end, in seq order',
  );
});

t.test(
  'one model request’s bounds: its whole time, its idle time and its caller, on one signal',
  async (t) => {
    const reasonOf = (s: AbortSignal) => (s.reason as DOMException).message;
    const aborted = (s: AbortSignal) =>
      new Promise<void>((r) => s.addEventListener('abort', () => r(), { once: true }));

    t.test('touched, it outlives its idle time; its whole time still ends it, not as idle', async (t) => {
      // Generous against a loaded machine: touched every 20 ms, an idle time of 250 ms never runs out.
      const bounds = idleSignal(new AbortController().signal, 1500, 250);
      const touching = setInterval(() => bounds.touch(), 20);
      t.teardown(() => clearInterval(touching));
      await new Promise((r) => setTimeout(r, 750));
      t.notOk(bounds.signal.aborted, 'alive past three idle times while bytes arrive');
      await aborted(bounds.signal);
      t.equal((bounds.signal.reason as DOMException).name, 'TimeoutError');
      t.match(reasonOf(bounds.signal), /timeout/);
      t.notOk(bounds.idled, 'the whole time ran out, not the idle clock');
    });

    t.test('left alone, it ends on its idle clock', async (t) => {
      const bounds = idleSignal(new AbortController().signal, 60_000, 50);
      await aborted(bounds.signal);
      t.ok(bounds.idled);
      t.match(reasonOf(bounds.signal), /Nothing arrived for 50 ms/);
    });

    t.test(
      "without an idle time only the whole time bounds it; the caller's abort ends it at once",
      async (t) => {
        const caller = new AbortController();
        const bounds = idleSignal(caller.signal, 60_000, undefined);
        await new Promise((r) => setTimeout(r, 100));
        t.notOk(bounds.signal.aborted);
        caller.abort(new Error('cancelled'));
        t.ok(bounds.signal.aborted);
        t.equal((bounds.signal.reason as Error).message, 'cancelled');
        t.notOk(bounds.idled);
      },
    );

    t.test('cleared, nothing ends it any more', async (t) => {
      const caller = new AbortController();
      const bounds = idleSignal(caller.signal, 50, 50);
      bounds.clear();
      await new Promise((r) => setTimeout(r, 150));
      caller.abort();
      t.notOk(bounds.signal.aborted);
    });
  },
);
