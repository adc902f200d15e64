// decideNextStep under a hostile model (docs/reference/bounds.md): calls past the per-reply cap fail without
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

t.test('each recorded history leads to the step the loop must take next', async (t) => {
  const { callRecord, history, modelReply, reactAgent } = await import('./fixtures/react/recorded-calls.js');
  const clock = { content: '12:00' };
  const rows: { name: string; agent?: AgentPlan; records: Map<string, CallRecord>; step: unknown }[] = [
    {
      name: 'nothing recorded: call the model',
      records: history(),
      step: { type: 'call_model', turn: 0, callId: modelCallId(0) },
    },
    {
      name: 'a model call started but not answered: call it again',
      records: history({ ...modelReply(0, 'x'), status: 'started', reply: undefined } as CallRecord),
      step: { type: 'call_model', turn: 0, callId: modelCallId(0) },
    },
    {
      name: 'a text reply without output schema: final',
      records: history(modelReply(0, 'done')),
      step: { type: 'final', output: 'done' },
    },
    {
      name: 'a tool call not yet run: run it',
      records: history(modelReply(0, [['clock', '{}']])),
      step: {
        type: 'call_tools',
        turn: 0,
        calls: [{ kind: 'tool', name: 'clock', callId: toolCallId(0, 0), providerId: 'p0-0', args: {} }],
      },
    },
    {
      name: 'every call of the turn finished: the next model call',
      records: history(modelReply(0, [['clock', '{}']]), callRecord(0, 0, 'clock', clock)),
      step: { type: 'call_model', turn: 1, callId: modelCallId(1) },
    },
    {
      name: 'a started call is not done: run it again',
      records: history(modelReply(0, [['clock', '{}']]), callRecord(0, 0, 'clock', 'started')),
      step: {
        type: 'call_tools',
        turn: 0,
        calls: [{ kind: 'tool', name: 'clock', callId: toolCallId(0, 0), providerId: 'p0-0', args: {} }],
      },
    },
    {
      name: 'a delegation to a declared sub-agent',
      records: history(modelReply(0, [['_subagent_helper', '{"prompt":"hi"}']])),
      step: {
        type: 'call_tools',
        turn: 0,
        calls: [
          {
            kind: 'subagent',
            name: 'helper',
            callId: toolCallId(0, 0),
            providerId: 'p0-0',
            args: { prompt: 'hi' },
          },
        ],
      },
    },
    {
      name: 'an unknown tool fails before it runs',
      records: history(modelReply(0, [['nope', '{}']])),
      step: {
        type: 'call_tools',
        turn: 0,
        calls: [
          {
            kind: 'tool',
            name: 'nope',
            callId: toolCallId(0, 0),
            providerId: 'p0-0',
            failure: { code: 'tool_not_found', message: 'Tool nope does not exist.' },
          },
        ],
      },
    },
    {
      name: 'a delegation past the depth limit fails before it runs',
      records: history(modelReply(0, [['_subagent_helper', '{}']])),
      step: {
        type: 'call_tools',
        turn: 0,
        calls: [
          {
            kind: 'subagent',
            name: 'helper',
            callId: toolCallId(0, 0),
            providerId: 'p0-0',
            failure: { code: 'max_depth_exceeded', message: 'Delegation depth limit 0 reached.' },
          },
        ],
      },
    },
    {
      name: 'the last iteration calling tools again: max_iterations_exceeded',
      agent: reactAgent({ maxIterations: 1 }),
      records: history(modelReply(0, [['clock', '{}']])),
      step: {
        type: 'fail',
        error: { code: 'max_iterations_exceeded', message: 'The agent reached its limit of 1 iterations.' },
      },
    },
    {
      name: 'an answer not matching the output schema goes back to the model',
      agent: reactAgent({ outputSchema: answerSchema }),
      records: history(modelReply(0, '{"answer": 1}')),
      step: { type: 'call_model', turn: 1, callId: modelCallId(1) },
    },
    {
      name: 'a matching answer after a refused one is final',
      agent: reactAgent({ outputSchema: answerSchema }),
      records: history(modelReply(0, 'no json'), modelReply(1, '```json\n{"answer": "42"}\n```')),
      step: { type: 'final', output: { answer: '42' } },
    },
  ];
  for (const row of rows) {
    const depthLimited = row.name.includes('depth limit') ? { ...limits, maxDepth: 0 } : limits;
    t.strictSame(decideNextStep(row.agent ?? reactAgent(), row.records, depthLimited), row.step, row.name);
  }
});

t.test('judgeFinal accepts, narrows or refuses each final answer', async (t) => {
  const rows: { name: string; schema: typeof answerSchema | null; content: string; verdict: unknown }[] = [
    {
      name: 'no schema: the text as is',
      schema: null,
      content: 'plain',
      verdict: { ok: true, output: 'plain' },
    },
    {
      name: 'fenced JSON matching the schema',
      schema: answerSchema,
      content: '```json\n{"answer":"a"}\n```',
      verdict: { ok: true, output: { answer: 'a' } },
    },
    {
      name: 'an extra property where the schema forbids them',
      schema: { ...answerSchema, additionalProperties: false } as typeof answerSchema,
      content: '{"answer":"a","extra":1}',
      verdict: { ok: false, reason: /^The final response does not match the schema: / },
    },
    {
      name: 'text that is not JSON',
      schema: answerSchema,
      content: 'hello',
      verdict: { ok: false, reason: /^The final response is not valid JSON \(/ },
    },
    {
      name: 'JSON missing a required property',
      schema: answerSchema,
      content: '{}',
      verdict: { ok: false, reason: /^The final response does not match the schema: / },
    },
  ];
  for (const row of rows) {
    t.match(judgeFinal({ ...agent, outputSchema: row.schema }, row.content), row.verdict, row.name);
  }
});
