// decideNextStep under a hostile model (DESIGN §16): calls past the per-reply cap fail without
// running, and no reply makes the decision do more than linear work.
import t from 'tap';
import { modelCallId, toolCallId } from '../src/ids.js';
import type { AgentPlan } from '../src/plan/types.js';
import { decideNextStep, judgeFinal, judgeReply, type StepLimits } from '../src/react/decide-next-step.js';
import type { CallRecord, ModelToolCall } from '../src/wire/call-record.js';

const agent: AgentPlan = {
  name: 'boss',
  kind: 'react',
  description: '',
  model: 'default',
  tools: ['clock'],
  subagents: ['helper'],
  maxIterations: 10,
  inputSchema: null,
  outputSchema: null,
  callables: [],
  definitionHash: 'x',
};
const limits: StepLimits = { depth: 0, maxDepth: 8, maxDelegationsPerTurn: 16, maxCallsPerTurn: 64 };
const answerSchema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

/** The records of one model reply carrying `calls`. */
const replyWith = (calls: ModelToolCall[]) =>
  new Map<string, CallRecord>([
    [
      modelCallId(0),
      {
        v: 1,
        callId: modelCallId(0),
        kind: 'model',
        name: 'default',
        status: 'succeeded',
        startedAt: '',
        runner: 'r',
        reply: { content: null, toolCalls: calls, usage: { promptTokens: 0, completionTokens: 0 } },
      },
    ],
  ]);
const call = (name: string, i: number): ModelToolCall => ({ id: `c${i}`, name, arguments: '{}' });

t.test('calls past maxCallsPerTurn fail with too_many_calls, the earlier ones run', async (t) => {
  const calls = Array.from({ length: 2000 }, (_, i) => call(i % 2 ? 'clock' : 'invented', i));
  const step = decideNextStep(agent, replyWith(calls), limits);
  if (step.type !== 'call_tools') throw new Error(`expected call_tools, got ${step.type}`);
  t.equal(step.calls.length, 2000);
  t.equal(step.calls.filter((c) => 'args' in c).length, 32, 'every declared call within the cap runs');
  t.strictSame(
    step.calls.slice(0, 64).map((c) => ('failure' in c ? c.failure.code : 'run')),
    Array.from({ length: 64 }, (_, i) => (i % 2 ? 'run' : 'tool_not_found')),
  );
  const past = step.calls.slice(64);
  t.ok(
    past.every(
      (c) =>
        'failure' in c &&
        c.failure.code === 'too_many_calls' &&
        c.failure.message === 'At most 64 calls are allowed in one model reply.',
    ),
    'the 1936 calls past the cap fail as too_many_calls',
  );
  t.strictSame(past[1], {
    kind: 'tool',
    name: 'clock',
    callId: toolCallId(0, 65),
    providerId: 'c65',
    failure: { code: 'too_many_calls', message: 'At most 64 calls are allowed in one model reply.' },
  });
});

t.test('delegations count toward the call cap, and fail past it as sub-agent calls', async (t) => {
  const calls = Array.from({ length: 6 }, (_, i) => call(i < 3 ? 'clock' : '_subagent_helper', i));
  const step = decideNextStep(agent, replyWith(calls), { ...limits, maxCallsPerTurn: 4 });
  if (step.type !== 'call_tools') throw new Error(`expected call_tools, got ${step.type}`);
  t.strictSame(
    step.calls.map((c) => [c.kind, c.name, 'failure' in c ? c.failure.code : 'run']),
    [
      ['tool', 'clock', 'run'],
      ['tool', 'clock', 'run'],
      ['tool', 'clock', 'run'],
      ['subagent', 'helper', 'run'],
      ['subagent', 'helper', 'too_many_calls'],
      ['subagent', 'helper', 'too_many_calls'],
    ],
  );
});

t.test('the delegation cap still counts delegations only, in the model order', async (t) => {
  const calls = ['_subagent_helper', 'clock', '_subagent_helper', '_subagent_helper'].map(call);
  const step = decideNextStep(agent, replyWith(calls), { ...limits, maxDelegationsPerTurn: 2 });
  if (step.type !== 'call_tools') throw new Error(`expected call_tools, got ${step.type}`);
  t.strictSame(
    step.calls.map((c) => ('failure' in c ? c.failure.code : 'run')),
    ['run', 'run', 'run', 'too_many_delegations'],
  );
});

t.test('a reply of a hundred thousand delegations is planned in linear time', async (t) => {
  // Counting earlier delegations per call was quadratic: the timeout is the failure signal.
  t.setTimeout(2000);
  const calls = Array.from({ length: 100_000 }, (_, i) => call('_subagent_helper', i));
  const step = decideNextStep(agent, replyWith(calls), { ...limits, maxCallsPerTurn: 100_000 });
  if (step.type !== 'call_tools') throw new Error(`expected call_tools, got ${step.type}`);
  t.equal(step.calls.filter((c) => 'args' in c).length, 16);
});

t.test('the fenced-newlines final answer of issue 7 is refused at once as not JSON', async (t) => {
  t.setTimeout(2000);
  const verdict = judgeFinal({ ...agent, outputSchema: answerSchema }, `\`\`\`\n${'\n'.repeat(3000)}x`);
  t.equal(verdict.ok, false);
  t.match(verdict.ok ? '' : verdict.reason, /^The final response is not valid JSON \(/);
});

t.test('a short final answer wrong in many places names the first twenty', async (t) => {
  const schema = { type: 'array', items: { type: 'string' } };
  const verdict = judgeFinal({ ...agent, outputSchema: schema }, JSON.stringify(new Array(100).fill(0)));
  const first = Array.from({ length: 20 }, (_, i) => `/${i}: must be string`).join('; ');
  t.strictSame(verdict, {
    ok: false,
    reason: `The final response does not match the schema: ${first} (and 80 more)`,
  });
});

t.test(
  'a huge final answer wrong everywhere is refused with its first problem, in linear time',
  async (t) => {
    // Listing every problem made millions of Ajv errors (seconds): the timeout is the failure signal.
    t.setTimeout(2000);
    const schema = {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'object', required: ['x', 'y', 'z'] } } },
    };
    const content = JSON.stringify({ a: new Array(700_000).fill({}) });
    t.strictSame(judgeFinal({ ...agent, outputSchema: schema }, content), {
      ok: false,
      reason: "The final response does not match the schema: /a/0/x: must have required property 'x'",
    });
  },
);

t.test('a recorded answer is judged once, however often the loop reads it again', async (t) => {
  const records = replyWith([]);
  const reply = records.get(modelCallId(0))!.reply!;
  reply.content = '{"answer": "yes", "extra": 1}';
  const typed = { ...agent, outputSchema: answerSchema };
  const first = judgeReply(typed, reply);
  t.strictSame(first, { ok: true, output: { answer: 'yes' } });
  t.equal(judgeReply(typed, reply), first, 'the same verdict object comes back');
  t.strictSame(decideNextStep(typed, records, limits), { type: 'final', output: { answer: 'yes' } });
  t.not(judgeReply(agent, reply), first, 'another output schema judges anew');
});

t.test('arguments nested deeper than 256 levels fail the call before they are parsed', async (t) => {
  const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  const calls = [
    { id: 'ok', name: 'clock', arguments: nested(256) },
    { id: 'deep', name: 'clock', arguments: nested(257) },
    { id: 'abyss', name: '_subagent_helper', arguments: nested(1_000_000) },
  ];
  const step = decideNextStep(agent, replyWith(calls), limits);
  if (step.type !== 'call_tools') throw new Error(`expected call_tools, got ${step.type}`);
  t.ok('args' in step.calls[0]!, '256 levels are fine');
  const refused = {
    code: 'invalid_input',
    message: 'INVALID_ARGUMENT /: the arguments nest deeper than 256 levels',
  };
  t.strictSame('failure' in step.calls[1]! && step.calls[1].failure, refused);
  t.strictSame('failure' in step.calls[2]! && step.calls[2].failure, refused);
});
