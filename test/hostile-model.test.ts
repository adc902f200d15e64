// Property: whatever a model answers — malformed JSON, odd shapes, giant content, thousands of
// calls, odd Unicode, fences, unknown names — every invocation ends succeeded or failed with a
// registered code, and the runner's event loop never stalls while it handles them (docs/reference/bounds.md).
// The same for streamed replies (docs/guides/streaming.md): cut anywhere, not JSON, unfinished, too large, quiet.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ERROR_CODES } from '@agentmesh/shared';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { type FakeReply, type SeenRequest, sseEvent, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { failureSummary } from './support/property-report.js';

/** A string built to hurt: odd Unicode, fences, control characters, pathological repetition. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.constantFrom(
    '\uD800',
    '\u0000\u0001\u202e',
    '```json\n{"answer": "fenced"}\n```',
    '```\n```\n```',
    `\`\`\`\n${'\n'.repeat(3000)}x`,
    `\`\`\`json\n${' \n'.repeat(3000)}\`\`\``,
    `${'['.repeat(5000)}${']'.repeat(5000)}`,
    `{"answer": ${'['.repeat(100_000)}`,
    'x'.repeat(300_000),
  ),
  fc.json().map((j) => `\`\`\`json\n${j}\n\`\`\``),
);

/** Arguments as a model might send them: JSON objects, other JSON, not JSON at all, deep nesting. */
const hostileArgs = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string(), fc.jsonValue()).map((v) => JSON.stringify(v)),
  hostileText,
  fc.constantFrom(
    `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
    '{"prompt": 1e999}',
    '{"__proto__": {"x": 1}}',
  ),
);

const callName = fc.oneof(
  fc.constantFrom('echo', '_subagent_helper', '_subagent_', '_subagent_nobody', '_subagent__subagent_helper'),
  fc.constantFrom('constructor', '__proto__', 'toString', 'x'.repeat(10_000)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }).map((s) => `_subagent_${s}`),
);

const completion = (message: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'chatcmpl-hostile',
    object: 'chat.completion',
    model: 'fake',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    ...extra,
  });

/** One hostile reply, always sent as a raw body so the shape itself can be wrong. */
const hostileReply: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: hostileText },
  { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: hostileText.map((content) => completion({ role: 'assistant', content })) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.record({ name: callName, args: hostileArgs }), { minLength: 1, maxLength: 80 })
      .map((calls) =>
        completion({
          role: 'assistant',
          content: null,
          tool_calls: calls.map((c, i) => ({
            id: `call_${i}`,
            type: 'function',
            function: { name: c.name, arguments: c.args },
          })),
        }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 500, max: 3000 }).map((n) =>
      completion({
        role: 'assistant',
        content: null,
        tool_calls: Array.from({ length: n }, (_, i) => ({
          id: 'same-id',
          type: 'function',
          function: { name: i % 2 ? 'echo' : '_subagent_helper', arguments: '{"prompt":"x"}' },
        })),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        id: fc.jsonValue(),
        type: fc.jsonValue(),
        function: fc.oneof(fc.jsonValue(), fc.record({ name: fc.jsonValue(), arguments: fc.jsonValue() })),
      })
      .map((call) => completion({ role: 'assistant', content: null, tool_calls: [call] })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ choices: fc.jsonValue(), usage: fc.jsonValue() })
      .map((extra) => completion({ role: 'assistant', content: 'x' }, extra)),
  },
);

const chunk = (delta: unknown, finish: unknown = null, extra: Record<string, unknown> = {}) =>
  sseEvent({
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });

/** Text cut at arbitrary points (surrogate pairs and escapes included): how a stream delivers it. */
const cut = (text: string, at: number[]) => {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces.filter((p) => p !== '');
};
const cutPoints = fc.array(fc.nat(), { maxLength: 12 });

/** One hostile streamed reply (docs/guides/streaming.md): the events as the body's pieces, maybe left hanging. */
const hostileStream: fc.Arbitrary<{ sse: string[]; stall?: boolean }> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(hostileText, cutPoints, fc.constantFrom('stop', 'length', '', null, 7))
      .map(([text, at, finish]) => ({
        sse: [...cut(text, at).map((content) => chunk({ content })), chunk({}, finish), 'data: [DONE]\n\n'],
      })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.array(
          fc.record({
            name: callName,
            args: hostileArgs,
            index: fc.oneof(fc.nat(5), fc.constant(-1), fc.constant(1e12)),
          }),
          {
            minLength: 1,
            maxLength: 20,
          },
        ),
        cutPoints,
      )
      .map(([calls, at]) => ({
        sse: [
          ...calls.flatMap((c, i) => [
            chunk({
              tool_calls: [{ index: c.index, id: `call_${i}`, function: { name: c.name, arguments: '' } }],
            }),
            ...cut(c.args, at).map((a) =>
              chunk({ tool_calls: [{ index: c.index, function: { arguments: a } }] }),
            ),
          ]),
          chunk({}, 'tool_calls', { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
        ],
      })),
  },
  {
    weight: 2,
    // A data line that is not JSON, in the middle of a good stream.
    arbitrary: fc
      .tuple(hostileText, fc.string({ maxLength: 50 }))
      .map(([text, junk]) => ({ sse: [chunk({ content: text }), `data: {${junk}\n\n`, chunk({}, 'stop')] })),
  },
  {
    weight: 2,
    // A body that ends before any finish_reason.
    arbitrary: fc.tuple(hostileText, fc.boolean()).map(([text, done]) => ({
      sse: [chunk({ content: text }), ...(done ? ['data: [DONE]\n\n'] : [])],
    })),
  },
  {
    weight: 2,
    // Any bytes at all, cut anywhere: no framing, odd line ends, odd fields.
    arbitrary: fc
      .tuple(
        fc.array(
          fc.oneof(
            hostileText,
            fc.jsonValue().map((v) => sseEvent(JSON.stringify(v))),
          ),
          { maxLength: 8 },
        ),
        cutPoints,
      )
      .map(([parts, at]) => ({ sse: cut(parts.join(''), at) })),
  },
  {
    weight: 2,
    // Chunks of every shape, then a finish.
    arbitrary: fc
      .array(fc.oneof(fc.jsonValue(), fc.record({ choices: fc.jsonValue(), usage: fc.jsonValue() })), {
        maxLength: 6,
      })
      .map((shapes) => ({
        sse: [...shapes.map((v) => sseEvent(JSON.stringify(v))), chunk({ content: 'x' }, 'stop')],
      })),
  },
  {
    weight: 1,
    // A stream past the reply bound (256 KiB here), never ending by itself.
    arbitrary: fc.constant({
      sse: Array.from({ length: 80 }, () => chunk({ content: 'y'.repeat(8 * 1024) })),
      stall: true,
    }),
  },
  {
    weight: 1,
    // A stream that goes quiet mid-reply (MESH_MODEL_IDLE_SECONDS, 150 ms here).
    arbitrary: hostileText.map((text) => ({ sse: [chunk({ content: text })], stall: true })),
  },
);

const caseOf = (r: SeenRequest) =>
  /case-(\d+)/.exec(r.messages.find((m) => m.role === 'user')?.content ?? '')?.[1];

/** The property over one kind of hostile reply: every invocation ends, with a registered code. */
const everyReplyEnds =
  (
    reply: fc.Arbitrary<FakeReply>,
    limits: { modelIdleMs?: number; maxModelReplyBytes?: number; modelRetryMs?: number } = {},
    runs = 120,
  ) =>
  async (t: Test) => {
    const replies = new Map<string, FakeReply>();
    const mesh = await startMesh(t, {
      limits,
      tools: [
        {
          name: 'echo',
          description: 'Echoes.',
          input: { type: 'object', properties: { prompt: { type: 'string' } } },
          run: (args: unknown) => JSON.stringify(args).slice(0, 100),
        },
      ],
      agentsYaml: `
  free: {instructions: "@agent free", tools: [echo], subagents: [helper], maxIterations: 3}
  typed:
    instructions: "@agent typed"
    tools: [echo]
    maxIterations: 3
    output: {type: object, properties: {answer: {type: string}}, required: [answer]}
  helper: {description: Helps., instructions: "@agent helper"}
`,
      script: (r): FakeReply => {
        if (r.agent === 'helper') return { final: 'helped' };
        const id = caseOf(r);
        if (id !== undefined && turnOf(r) === 0 && replies.has(id)) return replies.get(id)!;
        return { final: r.agent === 'typed' ? '{"answer": "recovered"}' : 'recovered' };
      },
    });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    t.teardown(() => delay.disable());
    let n = 0;
    const outcomes = new Map<string, number>();
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    const report = await fc.check(
      fc.asyncProperty(reply, fc.constantFrom('free', 'typed'), async (hostile, agent) => {
        const id = String(n++);
        replies.set(id, hostile);
        const res = await mesh.invoke(agent, { prompt: `case-${id}` }, 'wait=60');
        const view = res.json;
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(view)}`);
        if (view.status === 'failed') {
          if (!(view.error?.code in ERROR_CODES)) throw new Error(`unregistered code ${view.error?.code}`);
          if (typeof view.error.message !== 'string' || view.error.message.length > 10_000)
            throw new Error('an error message must be a bounded string');
        } else if (view.status !== 'succeeded') {
          throw new Error(`ended ${view.status}`);
        }
        const key = view.status === 'failed' ? view.error.code : 'succeeded';
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? runs), seed, endOnFailure: true },
    );
    t.notOk(report.failed, failureSummary(report));
    t.ok(outcomes.size > 1, `outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    // A blocked loop lapses BullMQ's lock (RUNNER_LOCK_MS, 3 s here): stay far below it.
    t.ok(delay.max / 1e6 < 1500, `event-loop delay max ${Math.round(delay.max / 1e6)} ms`);
    const healthy = await mesh.invoke('free', { prompt: 'plain question' });
    t.equal(healthy.json.status, 'succeeded', 'the runner still serves a healthy agent');
  };

t.test(
  'every hostile model reply ends its invocation with a registered code and never stalls the runner',
  everyReplyEnds(hostileReply.map((raw) => ({ raw }))),
);

t.test(
  'every hostile streamed reply ends its invocation with a registered code and never stalls the runner',
  everyReplyEnds(
    hostileStream.map((sse) => ({ ...sse, chunkDelayMs: 1 })),
    // A stream that goes quiet is retried: all 5 attempts, as in production, but backing off from
    // 10 ms instead of 250 (about 3 s a case); each quiet case now waits mostly on its 5 idle limits.
    { modelIdleMs: 150, maxModelReplyBytes: 256 * 1024, modelRetryMs: 10 },
    // Fewer runs: each quiet case still takes about 1 s.
    60,
  ),
);
