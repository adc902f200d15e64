// A model's `usage` is hostile input like the rest of its reply (issue 24, items 3 and 4): huge,
// negative, fractional, infinite, missing, strings or only `total_tokens`. Token counts reach Redis
// as integers in [0, MAX_CALL_TOKENS], so no Lua step refuses them and no invocation is wedged;
// negatives count 0, `total_tokens` stands in for missing parts, and under a budget a reply that
// reports nothing is charged an estimate, so `?budget` / `maxTokens` cannot be bypassed.
import { MAX_CALL_TOKENS } from '@agentmesh/shared';
import fc from 'fast-check';
import t from 'tap';
import { type FakeReply, type SeenRequest, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { failureSummary } from './support/property-report.js';

/** A Chat Completions body whose `usage` is the raw JSON text `usage` (absent when undefined). */
const body = (message: object, usage: string | undefined) =>
  `{"id":"chatcmpl-u","object":"chat.completion","model":"fake","choices":[{"index":0,"message":${JSON.stringify(
    message,
  )},"finish_reason":"stop"}]${usage === undefined ? '' : `,"usage":${usage}`}}`;
const echoCall = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"prompt":"x"}' } }],
};
const answer = { role: 'assistant', content: 'done' };

// Each case's replies, by the case number in its prompt: [turn 0 (a tool call), turn 1 (final)].
const cases = new Map<string, [string | undefined, string | undefined]>();
const caseOf = (r: SeenRequest) =>
  /case-(\d+)/.exec(r.messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? '';

const mesh = await startMesh(t, {
  tools: [
    {
      name: 'echo',
      description: 'Echoes.',
      input: { type: 'object', properties: { prompt: { type: 'string' } } },
      run: () => 'echoed',
    },
  ],
  agentsYaml: `
  capped: {instructions: "@agent capped", tools: [echo], maxTokens: 100, maxIterations: 3}
  free: {instructions: "@agent free", tools: [echo], maxIterations: 3}
`,
  script: (r): FakeReply => {
    const usage = cases.get(caseOf(r)) ?? [undefined, undefined];
    return turnOf(r) === 0 ? { raw: body(echoCall, usage[0]) } : { raw: body(answer, usage[1]) };
  },
});

let n = 0;
/** Invokes `agent` with replies carrying these usages; answers its terminal view. */
async function run(agent: string, usages: [string | undefined, string | undefined], query = '') {
  const id = String(n++);
  cases.set(id, usages);
  const res = await mesh.invoke(agent, { prompt: `case-${id}` }, `wait=60${query}`);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

t.test('a usage of ±1e308 or 1e999 ends the invocation instead of wedging it', async (t) => {
  for (const [huge, tokens] of [
    ['1e308', MAX_CALL_TOKENS],
    ['1e999', MAX_CALL_TOKENS],
    ['-1e308', 0],
  ] as const) {
    const usage = `{"prompt_tokens": ${huge}, "completion_tokens": ${huge}}`;
    const free = await run('free', [usage, usage]);
    t.equal(free.status, 'succeeded', `${huge} without a budget`);
    t.strictSame(
      free.usage,
      { modelCalls: 2, promptTokens: 2 * tokens, completionTokens: 2 * tokens },
      `${huge} counted as ${tokens} per count`,
    );
    const capped = await run('capped', [usage, usage]);
    t.not(capped.status, 'running', `${huge} under maxTokens ends`);
  }
});

t.test('negative counts count nothing, so they cannot pay for a budget', async (t) => {
  const view = await run('capped', [
    '{"prompt_tokens": -1000, "completion_tokens": 1000}',
    '{"prompt_tokens": -1000, "completion_tokens": 1000}',
  ]);
  t.equal(view.status, 'failed');
  t.equal(view.error.code, 'budget_exceeded');
  t.strictSame(view.usage, { modelCalls: 1, promptTokens: 0, completionTokens: 1000 });
});

t.test('total_tokens stands in for missing parts', async (t) => {
  const alone = await run('free', ['{"total_tokens": 500}', '{"total_tokens": 500}']);
  t.strictSame(alone.usage, { modelCalls: 2, promptTokens: 1000, completionTokens: 0 });
  const beside = await run('free', [
    '{"prompt_tokens": 30, "total_tokens": 100}',
    '{"completion_tokens": 30, "total_tokens": 100}',
  ]);
  t.strictSame(beside.usage, { modelCalls: 2, promptTokens: 100, completionTokens: 100 });
  const capped = await run('capped', ['{"total_tokens": 500}', '{"total_tokens": 500}']);
  t.equal(capped.error?.code, 'budget_exceeded', 'and trips the budget');
});

t.test('under a budget, a reply without usable counts is charged an estimate', async (t) => {
  for (const usage of [undefined, '{}', 'null', '{"prompt_tokens": "5000", "completion_tokens": "5"}']) {
    const view = await run('free', [usage, usage], '&budget=1');
    t.equal(view.status, 'failed', `usage ${usage}`);
    t.equal(view.error.code, 'budget_exceeded', `usage ${usage}`);
    t.equal(view.usage.modelCalls, 1, 'the second model call never started');
    t.ok(view.usage.promptTokens >= 1 && view.usage.completionTokens >= 1, 'estimated from the bytes');
    const record = (await mesh.get(`/invocations/${view.id}`)).json;
    t.equal(record.status, 'failed');
  }
  const unbudgeted = await run('free', [undefined, undefined]);
  t.equal(unbudgeted.status, 'succeeded');
  t.strictSame(
    unbudgeted.usage,
    { modelCalls: 2, promptTokens: 0, completionTokens: 0 },
    'no budget, no estimate',
  );
});

/** A number as raw JSON text as a model might send it, or something that is no number. */
const hostileCount = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom('1e308', '-1e308', '1e999', '-1e999', '9007199254740993', '1e-400', '-0', '0.5', '0'),
  fc.constantFrom('"5000"', 'null', 'true', '{}', '[]', '"1e308"'),
);
const hostileUsage = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      { prompt_tokens: hostileCount, completion_tokens: hostileCount, total_tokens: hostileCount },
      { requiredKeys: [] },
    )
    .map(
      (u) =>
        `{${Object.entries(u)
          .map(([k, v]) => `"${k}":${v}`)
          .join(',')}}`,
    ),
);

t.test('whatever usage a model reports, every invocation ends and no budgeted call is free', async (t) => {
  const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
  const report = await fc.check(
    fc.asyncProperty(hostileUsage, hostileUsage, fc.constantFrom('free', 'capped'), async (u0, u1, agent) => {
      const view = await run(agent, [u0, u1]);
      if (!['succeeded', 'failed'].includes(view.status)) throw new Error(`ended ${view.status}`);
      if (view.status === 'failed' && view.error.code !== 'budget_exceeded')
        throw new Error(`failed with ${view.error.code}: ${view.error.message}`);
      const { modelCalls, promptTokens, completionTokens } = view.usage;
      for (const count of [promptTokens, completionTokens]) {
        if (!Number.isSafeInteger(count) || count < 0 || count > modelCalls * MAX_CALL_TOKENS)
          throw new Error(`usage ${JSON.stringify(view.usage)} out of bounds`);
      }
      if (agent === 'capped' && promptTokens + completionTokens < modelCalls)
        throw new Error(`a budgeted call counted nothing: ${JSON.stringify(view.usage)}`);
    }),
    { numRuns: Number(process.env.FC_RUNS ?? 60), seed, endOnFailure: true },
  );
  t.notOk(report.failed, failureSummary(report));
});
