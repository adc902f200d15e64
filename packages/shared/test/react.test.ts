// The ReAct loop's pure parts (src/react/): the child's first messages, the conversation rebuilt from
// the recorded calls, the next step and the judging of a final answer, bounded validation, JSON depth,
// code-fence stripping, and the token usage reported and charged.

import fc from 'fast-check';
import t from 'tap';
import { modelCallId, toolCallId } from '../src/ids.js';
import { DEFAULT_INPUT_SCHEMA } from '../src/plan/default-input-schema.js';
import type { AgentPlan } from '../src/plan/types.js';
import { boundedValidation } from '../src/react/bounded-validation.js';
import { buildConversation, toolMessage } from '../src/react/build-conversation.js';
import { chargedUsage, estimateUsage } from '../src/react/charged-usage.js';
import type { ChatMessage } from '../src/react/chat-message.js';
import { decideNextStep, judgeFinal, judgeReply, type StepLimits } from '../src/react/decide-next-step.js';
import { initialMessages } from '../src/react/initial-messages.js';
import { jsonDepth } from '../src/react/json-depth.js';
import { MAX_CALL_TOKENS, reportedUsage, tokenCount } from '../src/react/reported-usage.js';
import { stripFence } from '../src/react/strip-fence.js';
import type { CallRecord, ModelToolCall } from '../src/wire/call-record.js';
import { callRecord, history, modelReply, reactAgent } from './fixtures/react/recorded-calls.js';

/** An output schema of one required string property, `answer`. */
const answerSchema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

t.test('initialMessages', async (t) => {
  /*
   * The child's starting conversation (upstream contracts 17 and 23 in docs/reference/upstream-contracts.md;
   * ReActSubagentTest's message assertions). Not applicable: the skills listing (agentmesh has no skills).
   */

  type Shape = Pick<AgentPlan, 'instructions' | 'inputSchema' | 'outputSchema'>;
  const promptAgent: Shape = { inputSchema: { ...DEFAULT_INPUT_SCHEMA }, outputSchema: null };

  t.test(
    'instructions are the leading system message, literally, with no {prompt} substitution',
    async (t) => {
      const messages = initialMessages(
        { ...promptAgent, instructions: 'Literal {prompt} instructions' },
        { prompt: 'go' },
      );
      t.strictSame(messages, [
        { role: 'system', content: 'Literal {prompt} instructions' },
        { role: 'user', content: 'go' },
      ]);
    },
  );

  t.test('the schema prompt follows the instructions when an output schema is declared', async (t) => {
    const messages = initialMessages(
      { ...promptAgent, instructions: 'Research.', outputSchema: answerSchema },
      { prompt: 'q' },
    );
    t.strictSame(messages, [
      { role: 'system', content: 'Research.' },
      {
        role: 'system',
        content:
          'The final response should be json format, and match the schema {"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}',
      },
      { role: 'user', content: 'q' },
    ]);
  });

  t.test('without instructions the schema prompt comes first', async (t) => {
    const messages = initialMessages({ ...promptAgent, outputSchema: { type: 'string' } }, { prompt: 'q' });
    t.strictSame(
      messages.map((m) => m.content),
      ['The final response should be json format, and match the schema {"type":"string"}', 'q'],
    );
  });

  t.test('without instructions or an output schema there is only the user message', async (t) => {
    t.strictSame(initialMessages(promptAgent, { prompt: 'hello' }), [{ role: 'user', content: 'hello' }]);
    t.strictSame(initialMessages({ ...promptAgent, instructions: '' }, { prompt: 'hello' }), [
      { role: 'user', content: 'hello' },
    ]);
  });

  t.test('the user message is the prompt text under a prompt-only schema', async (t) => {
    const described = {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The task.' } },
    };
    t.equal(initialMessages(promptAgent, { prompt: 'review the diff' })[0]!.content, 'review the diff');
    t.equal(initialMessages({ ...promptAgent, inputSchema: described }, { prompt: 'x' })[0]!.content, 'x');
  });

  t.test('the user message is the input as compact JSON under any other schema', async (t) => {
    const review = { type: 'object', properties: { path: { type: 'string' }, lines: { type: 'integer' } } };
    t.equal(
      initialMessages({ ...promptAgent, inputSchema: review }, { path: 'a.ts', lines: 3 })[0]!.content,
      '{"path":"a.ts","lines":3}',
    );
    const promptAndMore = {
      type: 'object',
      properties: { prompt: { type: 'string' }, depth: { type: 'integer' } },
    };
    t.equal(
      initialMessages({ ...promptAgent, inputSchema: promptAndMore }, { prompt: 'p', depth: 2 })[0]!.content,
      '{"prompt":"p","depth":2}',
    );
    t.equal(initialMessages({ ...promptAgent, inputSchema: null }, 'plain')[0]!.content, '"plain"');
  });

  t.test(
    'an input that is not just a string prompt is sent as compact JSON even under the prompt schema',
    async (t) => {
      t.equal(initialMessages(promptAgent, { prompt: 42 })[0]!.content, '{"prompt":42}');
      t.equal(
        initialMessages(promptAgent, { prompt: 'p', extra: true })[0]!.content,
        '{"prompt":"p","extra":true}',
      );
    },
  );

  t.test('no message lists the sub-agents or shows the routing description', async (t) => {
    const agent: AgentPlan = {
      name: 'planner',
      kind: 'react',
      description: 'Routes research.',
      instructions: 'Plan.',
      model: 'default',
      tools: [],
      subagents: ['researcher'],
      maxIterations: 10,
      inputSchema: { ...DEFAULT_INPUT_SCHEMA },
      outputSchema: null,
      callables: [
        { name: '_subagent_researcher', description: 'Researches. This is subagent.', parameters: {} },
      ],
      definitionHash: '0'.repeat(64),
    };
    const messages = initialMessages(agent, { prompt: 'Plan it.' });
    t.equal(messages.length, 2);
    t.notMatch(JSON.stringify(messages), /_subagent_|researcher|Routes research/);
  });
});

t.test('buildConversation', async (t) => {
  // buildConversation rebuilds what model call `turn` is sent from the recorded calls alone.

  const schemaPrompt = `The final response should be json format, and match the schema ${JSON.stringify(answerSchema)}`;

  t.test('each recorded history gives the messages of the next model call', async (t) => {
    const rows: {
      name: string;
      instructions?: string;
      outputSchema?: typeof answerSchema;
      records: ReturnType<typeof history>;
      turn: number;
      messages: ChatMessage[];
    }[] = [
      {
        name: 'the first call: instructions, then the input as JSON',
        instructions: 'Be brief.',
        records: history(),
        turn: 0,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: '{"q":1}' },
        ],
      },
      {
        name: 'a turn of two calls: the reply, then one tool message each in the model order',
        records: history(
          modelReply(0, [
            ['clock', '{}'],
            ['_subagent_helper', '{"prompt":"p"}'],
          ]),
          callRecord(0, 0, 'clock', { content: '12:00' }),
          callRecord(0, 1, 'helper', { error: { code: 'subagent_failed', message: 'boom' } }, 'subagent'),
        ),
        turn: 1,
        messages: [
          { role: 'user', content: '{"q":1}' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: toolCallId(0, 0), type: 'function', function: { name: 'clock', arguments: '{}' } },
              {
                id: toolCallId(0, 1),
                type: 'function',
                function: { name: '_subagent_helper', arguments: '{"prompt":"p"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: toolCallId(0, 0), content: '12:00' },
          {
            role: 'tool',
            tool_call_id: toolCallId(0, 1),
            content: 'Sub-agent _subagent_helper execute failed: boom',
          },
        ],
      },
      {
        name: 'a refused final answer goes back with the reason as a user message',
        outputSchema: answerSchema,
        records: history(modelReply(0, '{}')),
        turn: 1,
        messages: [
          { role: 'system', content: schemaPrompt },
          { role: 'user', content: '{"q":1}' },
          { role: 'assistant', content: '{}' },
          {
            role: 'user',
            content: `The final response does not match the schema: /answer: must have required property 'answer' ${schemaPrompt}`,
          },
        ],
      },
    ];
    for (const row of rows) {
      const agent = reactAgent({
        ...(row.instructions ? { instructions: row.instructions } : {}),
        outputSchema: row.outputSchema ?? null,
      });
      t.match(buildConversation(agent, { q: 1 }, row.records, row.turn), row.messages, row.name);
      t.equal(
        buildConversation(agent, { q: 1 }, row.records, row.turn).length,
        row.messages.length,
        row.name,
      );
    }
  });

  t.test('a failed call gives the model the wording of its kind', async (t) => {
    const rows: [name: string, record: ReturnType<typeof callRecord>, text: string][] = [
      ['a result', callRecord(0, 0, 'clock', { content: 'ok' }), 'ok'],
      [
        'an unknown tool',
        callRecord(0, 0, 'nope', { error: { code: 'tool_not_found', message: 'x' } }),
        'Tool nope does not exist.',
      ],
      [
        'a failed tool',
        callRecord(0, 0, 'clock', { error: { code: 'tool_failed', message: 'down' } }),
        'Tool clock execute failed: down',
      ],
      [
        'a failed delegation without a reason',
        callRecord(0, 0, 'helper', { error: { code: 'subagent_failed', message: ' ' } }, 'subagent'),
        'Sub-agent _subagent_helper execute failed.',
      ],
    ];
    for (const [name, record, text] of rows) t.equal(toolMessage(record), text, name);
  });
});

t.test('decideNextStep', async (t) => {
  // decideNextStep under a hostile model (docs/reference/bounds.md): calls past the per-reply cap fail without
  // running, and no reply makes the decision do more than linear work.

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
});

t.test('boundedValidation', async (t) => {
  // boundedValidation: a model-made value judged with work bounded by its size (docs/reference/bounds.md).

  const strings = { type: 'array', items: { type: 'string' } };

  t.test('a valid value has no problems', async (t) => {
    t.equal(boundedValidation(strings, ['a'], 5), undefined);
  });

  t.test('a short value lists its first twenty problems and counts the rest', async (t) => {
    const value = new Array(25).fill(0);
    const first = Array.from({ length: 20 }, (_, i) => `/${i}: must be string`).join('; ');
    t.equal(boundedValidation(strings, value, JSON.stringify(value).length), `${first} (and 5 more)`);
  });

  t.test('a huge value wrong everywhere is judged by its first problem only, in linear time', async (t) => {
    // Every problem of it made two million Ajv errors: the timeout is the failure signal.
    t.setTimeout(2000);
    const value = new Array(2_000_000).fill(0);
    t.equal(boundedValidation(strings, value, 4_000_001), '/0: must be string');
  });
});

t.test('jsonDepth', async (t) => {
  // jsonDepth: nesting counted in one pass over the text, strings and escapes skipped.

  t.test('the depth counts arrays and objects, not brackets inside strings', async (t) => {
    t.equal(jsonDepth('1'), 0);
    t.equal(jsonDepth('{}'), 1);
    t.equal(jsonDepth('{"a":[{"b":[]}],"c":{}}'), 4);
    t.equal(jsonDepth('{"a":"[[[{{{"}'), 1);
    t.equal(jsonDepth('["\\"[[", []]'), 2, 'an escaped quote does not end the string');
  });

  t.test('the count stops as soon as it passes the limit', async (t) => {
    t.equal(jsonDepth(`${'['.repeat(1000)}${']'.repeat(1000)}`, 10), 11);
  });
});

t.test('stripFence', async (t) => {
  // stripFence: the answer inside one Markdown code fence, found by a linear scan (issue 7, defect 2:
  // the regex it replaces backtracked for seconds on "```\n" + 3000 newlines + "x").

  t.test('a ```json fence gives the JSON inside it', async (t) => {
    t.equal(stripFence('```json\n{"a":1}\n```'), '{"a":1}');
    t.equal(stripFence('  \n```\n[1, 2]\n```\n  '), '[1, 2]');
    t.equal(stripFence('```json  \n\n{"a":1}\n\n  ```'), '{"a":1}', 'blank lines around the body go');
  });

  t.test('text that is not one fence comes back unchanged', async (t) => {
    for (const text of [
      '{"a":1}',
      '```json {"a":1}```',
      '``` json\n{}\n```',
      '```\n{}',
      'x\n```\n{}\n```',
      '```',
    ]) {
      t.equal(stripFence(text), text, JSON.stringify(text));
    }
  });

  // The old regex is the specification; on inputs this short it answers at once.
  const byRegex = (text: string) => /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text)?.[1] ?? text;

  t.test('it means exactly what the fence regex meant, on every short text of fence pieces', async (t) => {
    const piece = fc.constantFrom(
      '`',
      '```',
      '\n',
      ' ',
      '\t',
      '\r',
      '\u00a0',
      '\u2028',
      'json',
      'j',
      'x',
      '{}',
    );
    fc.assert(
      fc.property(fc.string({ unit: piece, maxLength: 16 }), (text) => stripFence(text) === byRegex(text)),
      { numRuns: 20_000 },
    );
    t.pass();
  });

  t.test('pathological texts are answered in linear time', async (t) => {
    // A quadratic scan of these takes minutes: the 2 s timeout is the failure signal, not a benchmark.
    t.setTimeout(2000);
    const n = 2_000_000;
    const repro = `\`\`\`\n${'\n'.repeat(3000)}x`;
    t.equal(stripFence(repro), repro, 'the issue-7 repro: no closing fence, unchanged');
    const open = `\`\`\`\n${'\n'.repeat(n)}x`;
    t.equal(stripFence(open), open);
    const spaces = `\`\`\`json${' \n'.repeat(n)}{}${'\n '.repeat(n)}\`\`\``;
    t.equal(stripFence(spaces), '{}', 'the body ends at the first newline of the closing blank');
    const fences = '```\n'.repeat(n);
    t.equal(stripFence(fences), '```\n'.repeat(n - 2).slice(0, -1), 'the body runs to the last fence');
    const noBreak = `\`\`\`${' '.repeat(n)}x${' '.repeat(n)}\`\`\``;
    t.equal(stripFence(noBreak), noBreak);
  });
});

t.test('reportedUsage', async (t) => {
  t.test('a count is an integer in [0, MAX_CALL_TOKENS]; what is no number is absent', async (t) => {
    t.equal(tokenCount(12), 12);
    t.equal(tokenCount(12.9), 12);
    t.equal(tokenCount(-5), 0);
    t.equal(tokenCount(-0), 0);
    t.equal(tokenCount(1e308), MAX_CALL_TOKENS);
    t.equal(tokenCount(Number.POSITIVE_INFINITY), MAX_CALL_TOKENS);
    t.equal(tokenCount(Number.NEGATIVE_INFINITY), 0);
    for (const v of [Number.NaN, '12', null, undefined, {}, true])
      t.equal(tokenCount(v), undefined, String(v));
  });

  t.test('usage with both parts keeps them, clamped', async (t) => {
    t.strictSame(reportedUsage({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }), {
      promptTokens: 11,
      completionTokens: 7,
    });
    t.strictSame(reportedUsage(JSON.parse('{"prompt_tokens": 1e999, "completion_tokens": -1e308}')), {
      promptTokens: MAX_CALL_TOKENS,
      completionTokens: 0,
    });
  });

  t.test('total_tokens stands in for the parts a usage lacks', async (t) => {
    t.strictSame(reportedUsage({ total_tokens: 500 }), { promptTokens: 500, completionTokens: 0 });
    t.strictSame(reportedUsage({ prompt_tokens: 30, total_tokens: 100 }), {
      promptTokens: 30,
      completionTokens: 70,
    });
    t.strictSame(reportedUsage({ completion_tokens: 30, total_tokens: 100 }), {
      promptTokens: 70,
      completionTokens: 30,
    });
    t.strictSame(reportedUsage({ prompt_tokens: 300, total_tokens: 100 }), {
      promptTokens: 300,
      completionTokens: 0,
    });
    t.strictSame(reportedUsage({ prompt_tokens: 5 }), { promptTokens: 5, completionTokens: 0 });
  });

  t.test('a usage without one usable count is no usage', async (t) => {
    for (const raw of [undefined, null, {}, [], 'x', 12, { prompt_tokens: '5000' }, { total_tokens: null }])
      t.equal(reportedUsage(raw), undefined, JSON.stringify(raw));
  });
});

t.test('chargedUsage', async (t) => {
  const estimate = () => ({ promptTokens: 40, completionTokens: 3 });

  t.test('reported counts are charged as they are, clamped again whatever client made them', async (t) => {
    t.strictSame(chargedUsage({ promptTokens: 11, completionTokens: 7 }, estimate), {
      promptTokens: 11,
      completionTokens: 7,
    });
    t.strictSame(chargedUsage({ promptTokens: -3, completionTokens: 1e308 }), {
      promptTokens: 0,
      completionTokens: MAX_CALL_TOKENS,
    });
    t.strictSame(chargedUsage({ promptTokens: Number.NaN, completionTokens: 2.5 }), {
      promptTokens: 0,
      completionTokens: 2,
    });
  });

  t.test('with a budget, a call that counts no token is charged the estimate, marked so', async (t) => {
    t.strictSame(chargedUsage({ promptTokens: 0, completionTokens: 0 }, estimate), {
      promptTokens: 40,
      completionTokens: 3,
      estimated: true,
    });
    t.strictSame(chargedUsage({ promptTokens: 0, completionTokens: 0 }), {
      promptTokens: 0,
      completionTokens: 0,
    });
  });

  t.test('the estimate is a token per four bytes, at least one each', async (t) => {
    const messages = [{ role: 'user' as const, content: 'x'.repeat(400) }];
    const usage = estimateUsage(messages, { content: 'y'.repeat(41), toolCalls: [] });
    t.equal(usage.completionTokens, 11);
    t.ok(usage.promptTokens >= 100 && usage.promptTokens < 110, `prompt ${usage.promptTokens}`);
    const empty = estimateUsage([], { content: null, toolCalls: [] });
    t.strictSame(empty, { promptTokens: 1, completionTokens: 1 });
    const calls = estimateUsage([], {
      content: null,
      toolCalls: [{ name: 'echo', arguments: '{"a":1234}' }],
    });
    t.equal(calls.completionTokens, 4);
  });
});
