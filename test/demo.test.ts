// The demo (mesh.yaml, demo/): its config and agents, its approval, its calculator and search_docs
// tools, and the offline demo model — how it splits a planner's question and words its answers, and
// what it answers over HTTP. No mesh runs: a section that speaks HTTP starts its own demo model on a
// free port in this process and closes it when its tests end. Each former file's tests are one
// heading subtest below, its helpers inside it.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildPlan, compileSchema, loadConfig } from '@agentmesh/shared';
import { loadToolDefinitions } from '@agentmesh/tool-host';
import t from 'tap';
import { composeAnswer } from '../demo/model/compose-answer.js';
import { startDemoModel } from '../demo/model/demo-model.js';
import { fillArguments } from '../demo/model/fill-arguments.js';
import { fillSchema } from '../demo/model/fill-schema.js';
import { findComputation } from '../demo/model/find-computation.js';
import { type DemoTool, parseChatRequest } from '../demo/model/parse-chat-request.js';
import { planDelegations, splitQuestion } from '../demo/model/plan-delegations.js';
import { evaluateExpression } from '../demo/tools/evaluate-expression.js';
import * as demoTools from '../demo/tools/index.js';
import { calculator, searchDocs } from '../demo/tools/index.js';
import { DOCS_DIR, searchCorpus, tokenize } from '../demo/tools/search-corpus.js';

const MESH_YAML = fileURLToPath(new URL('../mesh.yaml', import.meta.url));

// ---------------------------------------------------------------------------------------------------
// The demo mesh.yaml: it loads, and its agents fit together the way the demo needs.
t.test('mesh.yaml loads, and its agents fit together as the demo needs', async (t) => {
  t.test('mesh.yaml defaults to the offline demo model and the local tool-host', async (t) => {
    const config = await loadConfig(MESH_YAML, {});
    t.match(config.models.default, { baseUrl: 'http://127.0.0.1:3001/v1', apiKey: '', model: 'gpt-4o-mini' });
    t.equal(config.toolHost, 'http://127.0.0.1:3002');
    t.match(config.tools, [/demo\/tools\/index\.ts$/]);
  });

  t.test('the environment picks a real model and another tool-host', async (t) => {
    const env = {
      MODEL_BASE_URL: 'https://api.openai.com/v1',
      OPENAI_API_KEY: 'sk-x',
      MODEL: 'gpt-4o',
      TOOL_HOST_URL: 'http://th:1',
    };
    const config = await loadConfig(MESH_YAML, env);
    t.match(config.models.default, { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x', model: 'gpt-4o' });
    t.equal(config.toolHost, 'http://th:1');
  });

  t.test('the planner delegates to at least two sub-agents and can calculate', async (t) => {
    const { agents } = await loadConfig(MESH_YAML, {});
    t.match(agents.planner, { tools: ['calculator'] });
    t.ok((agents.planner?.subagents.length ?? 0) >= 2);
    for (const name of agents.planner?.subagents ?? []) {
      t.match(agents[name], { tools: ['search_docs'] }, `${name} searches the docs`);
      t.ok(
        (agents[name]?.description ?? '').length > 20,
        `${name} has a description for the planner's model`,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// The demo's approval (docs/guides/approvals-and-budgets.md): the publisher's publish_note needs a human's approval,
// and the offline demo model calls it for any prompt and reports a rejection in its answer.
t.test("the demo's approval: publish_note waits for a human", async (t) => {
  t.test("mesh.yaml's publisher waits for approval of every publish_note", async (t) => {
    const config = await loadConfig(MESH_YAML, {});
    const tools = loadToolDefinitions(Object.values(demoTools)).map((x) => x.info);
    t.match(
      tools.find((x) => x.name === 'publish_note'),
      { needsApproval: true },
    );
    const plan = buildPlan(config, { tools });
    t.same(plan.agents.publisher?.approvals, ['publish_note']);
    t.notOk(plan.agents.planner?.approvals, 'the planner needs none');
  });

  t.test('the demo model publishes, then reports the rejection it was given', async (t) => {
    const model = await startDemoModel({ port: 0 });
    t.teardown(() => model.close());
    const tool = {
      type: 'function',
      function: { name: 'publish_note', description: 'Publishes.', parameters: { type: 'object' } },
    };
    const chat = async (messages: unknown[]) =>
      (await (
        await fetch(`${model.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', messages, tools: [tool] }),
        })
      ).json()) as { choices: { message: { content: string | null; tool_calls?: any[] } }[] };
    const user = { role: 'user', content: 'Redis AOF is on from Monday. Tell the team.' };
    const first = (await chat([user])).choices[0]!.message;
    t.equal(first.tool_calls?.[0]?.function.name, 'publish_note');
    t.same(JSON.parse(first.tool_calls![0].function.arguments), {
      title: 'Redis AOF is on from Monday',
      text: user.content,
    });
    const rejected = 'Tool publish_note was not approved: wrong week';
    const second = (
      await chat([
        user,
        { role: 'assistant', content: null, tool_calls: first.tool_calls },
        { role: 'tool', tool_call_id: first.tool_calls![0].id, content: rejected },
      ])
    ).choices[0]!.message;
    t.match(second.content, rejected);
  });
});

// ---------------------------------------------------------------------------------------------------
// The demo's calculator tool: a recursive-descent parser, never eval.
t.test('the calculator tool parses arithmetic itself, never eval', async (t) => {
  t.test('multiplication and division bind tighter than addition and subtraction', async (t) => {
    t.equal(evaluateExpression('2 + 3 * 4'), 14);
    t.equal(evaluateExpression('20 - 6 / 3'), 18);
    t.equal(evaluateExpression('10 - 4 - 3'), 3, 'subtraction is left-associative');
    t.equal(evaluateExpression('17 % 5 + 1'), 3);
  });

  t.test('parentheses override precedence, at any depth', async (t) => {
    t.equal(evaluateExpression('(2 + 3) * 4'), 20);
    t.equal(evaluateExpression('((1 + 2) * (3 + 4)) / 7'), 3);
    t.equal(evaluateExpression(' 2*(16+4) '), 40, 'whitespace is optional');
  });

  t.test('unary minus applies to numbers, groups and itself, and binds looser than a power', async (t) => {
    t.equal(evaluateExpression('-5 + 2'), -3);
    t.equal(evaluateExpression('-(2 + 3)'), -5);
    t.equal(evaluateExpression('--4'), 4);
    t.equal(evaluateExpression('3 * -2'), -6);
    t.equal(evaluateExpression('-2 ^ 2'), -4);
    t.equal(evaluateExpression('2 ^ -1'), 0.5);
  });

  t.test('powers are right-associative and decimals are exact to twelve digits', async (t) => {
    t.equal(evaluateExpression('2 ^ 3 ^ 2'), 512);
    t.equal(evaluateExpression('0.1 + 0.2'), 0.3);
    t.equal(evaluateExpression('.5 * 4'), 2);
    t.equal(evaluateExpression('7 / 2'), 3.5);
  });

  t.test('division and modulo by zero throw with the position of the operator', async (t) => {
    t.throws(() => evaluateExpression('1 / 0'), {
      name: 'ExpressionError',
      message: 'Division by zero at position 2.',
    });
    t.throws(() => evaluateExpression('5 % (2 - 2)'), { message: 'Modulo by zero at position 2.' });
  });

  t.test('bad syntax throws a message that says what is wrong and where', async (t) => {
    t.throws(() => evaluateExpression(''), { message: 'Expression is empty.' });
    t.throws(() => evaluateExpression('2 +'), {
      message: "Unexpected end of expression: expected a number or '('.",
    });
    t.throws(() => evaluateExpression('(1 + 2'), { message: "Missing ')' for '(' at position 0." });
    t.throws(() => evaluateExpression('1 + 2)'), { message: "Unexpected character ')' at position 5." });
    t.throws(() => evaluateExpression('1.2.3'), { message: "Unexpected character '.' at position 3." });
    t.throws(() => evaluateExpression('10 ^ 400'), { message: 'Result is not a finite number.' });
    t.throws(
      () => evaluateExpression(`${'('.repeat(150)}1${')'.repeat(150)}`),
      /nests deeper than 100 levels/,
    );
  });

  t.test('code is rejected, never run', async (t) => {
    for (const code of [
      'process.exit()',
      'require("fs")',
      'Math.PI',
      '1 + globalThis',
      '(() => 1)()',
      '2; process.exit(1)',
    ]) {
      t.throws(() => evaluateExpression(code), { name: 'ExpressionError' }, code);
    }
    t.throws(() => evaluateExpression('process.exit()'), {
      message: "Unexpected character 'p' at position 0: expected a number or '('.",
    });
  });

  t.test(
    'the tool is idempotent, declares its input schema and returns the expression with its result',
    async (t) => {
      t.equal(calculator.name, 'calculator');
      t.equal(calculator.idempotent, true);
      t.match(calculator.input, { type: 'object', required: ['expression'], additionalProperties: false });
      const result = await calculator.run({ expression: '2 * (16 + 4)' }, {} as never);
      t.strictSame(result, { expression: '2 * (16 + 4)', result: 40 });
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// The demo's search_docs tool over demo/docs/*.md.
t.test('the search_docs tool finds the demo documents', async (t) => {
  const search = (query: string, k?: number) =>
    searchDocs.run(k === undefined ? { query } : { query, k }, {} as never);

  t.test('the corpus holds six to ten markdown documents', async (t) => {
    const files = readdirSync(DOCS_DIR).filter((f) => f.endsWith('.md'));
    t.ok(files.length >= 6 && files.length <= 10, `${files.length} documents`);
  });

  t.test('a question finds the document about it first, with its title and a matching excerpt', async (t) => {
    const [top] = await search('How does Redis persist data with the append-only file?');
    t.match(top, {
      doc: 'redis-persistence',
      title: 'Redis persistence: RDB snapshots and the append-only file',
      excerpt: /append-only file \(AOF\) logs every write command/,
    });
    t.ok(top!.score > 0);
    t.equal((await search('how do BullMQ flows wait for child jobs'))[0]?.doc, 'bullmq-flows');
    t.equal((await search('Last-Event-ID reconnect'))[0]?.doc, 'server-sent-events');
    t.equal((await search('retry 429 with jitter'))[0]?.doc, 'exponential-backoff');
  });

  t.test('results come best first, at most k of them, each {doc, title, excerpt, score}', async (t) => {
    const hits = await search('Redis jobs queue schema retry', 5);
    t.ok(hits.length >= 2 && hits.length <= 5);
    for (const hit of hits) t.strictSame(Object.keys(hit), ['doc', 'title', 'excerpt', 'score']);
    const scores = hits.map((h) => h.score);
    t.strictSame(
      scores,
      [...scores].sort((a, b) => b - a),
    );
    t.equal((await search('Redis jobs queue schema retry', 1)).length, 1);
    t.equal((await search('Redis')).length <= 3, true, 'k defaults to 3');
  });

  t.test('a query sharing no term with any document finds nothing', async (t) => {
    t.strictSame(await search('zebra giraffe'), []);
    t.strictSame(searchCorpus('the and of', 3), [], 'stopwords alone match nothing');
  });

  t.test('terms are lower-cased, stopwords dropped and plurals folded', async (t) => {
    t.strictSame(tokenize('What are the Jobs of BullMQ Flows?'), ['job', 'bullmq', 'flow']);
  });

  t.test('excerpts are short plain text', async (t) => {
    for (const hit of await search('OpenAPI JSON Schema components', 5)) {
      t.ok(hit.excerpt.length <= 330, hit.doc);
      t.notMatch(hit.excerpt, /\*\*|`/, hit.doc);
    }
  });

  t.test('the tool is idempotent and bounds k to 1..5 in its input schema', async (t) => {
    t.equal(searchDocs.name, 'search_docs');
    t.equal(searchDocs.idempotent, true);
    t.match(searchDocs.input, {
      required: ['query'],
      properties: { k: { type: 'integer', minimum: 1, maximum: 5 } },
      additionalProperties: false,
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// How the offline demo model splits a planner's question (planDelegations, findComputation).
t.test("the offline model splits a planner's question (planDelegations, findComputation)", async (t) => {
  const tool = (
    name: string,
    properties: Record<string, unknown> = { prompt: { type: 'string' } },
  ): DemoTool => ({
    name,
    description: '',
    parameters: { type: 'object', properties, required: Object.keys(properties) },
  });

  t.test('written-out arithmetic is found and cut out of the prose around it', async (t) => {
    t.equal(findComputation('and what is 2 * (16 + 4)?'), '2 * (16 + 4)');
    t.equal(findComputation('Also compute (3 + 4) * 2.'), '(3 + 4) * 2');
    t.equal(findComputation('is -3 + 10 positive'), '-3 + 10');
    t.equal(findComputation('(see 2 ^ 10)'), '2 ^ 10');
  });

  t.test('arithmetic in words becomes an expression', async (t) => {
    t.equal(findComputation('What is 15% of 80?'), '80 * 15 / 100');
    t.equal(findComputation('how much is 7 times 6'), '7 * 6');
    t.equal(findComputation('12 divided by 4 plus 1'), '12 / 4 + 1');
  });

  t.test('text without a computation has none', async (t) => {
    t.equal(findComputation('How does Redis 7 persist data?'), undefined);
    t.equal(findComputation('a - b'), undefined);
    t.equal(findComputation('1 / 0'), undefined, 'an expression the calculator would refuse is not offered');
  });

  t.test('a question splits at sentences and joined clauses, leaving the arithmetic out', async (t) => {
    t.strictSame(splitQuestion('What is SSE? How do idempotency keys work? Also compute 3 * 16.'), [
      'What is SSE?',
      'How do idempotency keys work?',
    ]);
    t.strictSame(splitQuestion('What is the ReAct pattern and how do idempotency keys work?'), [
      'What is the ReAct pattern',
      'how do idempotency keys work?',
    ]);
  });

  t.test('a one-part question gets a second, verifying part', async (t) => {
    t.strictSame(splitQuestion('What is OpenAPI?'), [
      'What is OpenAPI?',
      'Verify the facts behind: What is OpenAPI?',
    ]);
  });

  t.test('parts go round robin to the sub-agents, with the calculator last when offered', async (t) => {
    const tools = [
      tool('calculator', { expression: { type: 'string' } }),
      tool('_subagent_a'),
      tool('_subagent_b'),
    ];
    t.strictSame(planDelegations('What is SSE? What is AOF? What is a flow? What is 2 + 2?', tools), [
      { name: '_subagent_a', args: { prompt: 'What is SSE?' } },
      { name: '_subagent_b', args: { prompt: 'What is AOF?' } },
      { name: '_subagent_a', args: { prompt: 'What is a flow?' } },
      { name: 'calculator', args: { expression: '2 + 2' } },
    ]);
    t.strictSame(
      planDelegations('What is SSE? What is 2 + 2?', tools.slice(1)).map((c) => c.name),
      ['_subagent_a', '_subagent_b'],
      'no calculator call when none is offered',
    );
  });

  t.test(
    'a sub-agent without a prompt parameter gets the text in its required string properties',
    async (t) => {
      const tools = [tool('_subagent_q', { question: { type: 'string' }, depth: { type: 'integer' } })];
      t.strictSame(planDelegations('What is SSE?', tools)[0], {
        name: '_subagent_q',
        args: { question: 'What is SSE?' },
      });
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// How the offline demo model words its final answers (composeAnswer, fillSchema).
t.test('the offline model words its final answers (composeAnswer, fillSchema)', async (t) => {
  const call = (id: string, name: string, args: unknown) => ({
    id,
    type: 'function',
    function: { name, arguments: JSON.stringify(args) },
  });
  // The conversation of one turn of tool calls and their results, as a runner would send it.
  function answer(question: string, calls: [string, unknown, string][], system?: string): string {
    const ids = calls.map((_, i) => `c${i}`);
    const messages = [
      ...(system ? [{ role: 'system', content: system }] : []),
      { role: 'user', content: question },
      {
        role: 'assistant',
        content: null,
        tool_calls: calls.map(([name, args], i) => call(ids[i]!, name, args)),
      },
      ...calls.map(([, , content], i) => ({ role: 'tool', tool_call_id: ids[i], content })),
    ];
    return composeAnswer(parseChatRequest({ model: 'm', messages }).messages);
  }

  t.test(
    'a planner’s answer quotes each sub-agent, unlabelled, and the calculator, in call order',
    async (t) => {
      const text = answer('Q?', [
        [
          '_subagent_researcher',
          { prompt: 'Redis AOF' },
          '[offline demo model] AOF logs every write.\nSources: A.',
        ],
        ['_subagent_fact_checker', { prompt: 'flows' }, '{"verdict":"supported","evidence":"parents wait"}'],
        ['calculator', { expression: '2 * (16 + 4)' }, '{"expression":"2 * (16 + 4)","result":40}'],
      ]);
      t.equal(
        text,
        '[offline demo model] Answer to "Q?", put together from 3 results:\n' +
          '- researcher on "Redis AOF": AOF logs every write. Sources: A.\n' +
          '- fact_checker on "flows": verdict: supported; evidence: parents wait\n' +
          '- calculator: 2 * (16 + 4) = 40',
      );
    },
  );

  t.test('a researcher’s answer quotes the best excerpt and cites every title', async (t) => {
    const hits = [
      { doc: 'a', title: 'Doc A', excerpt: 'A says this.', score: 3 },
      { doc: 'b', title: 'Doc B', excerpt: 'B says that.', score: 1 },
    ];
    t.equal(
      answer('What?', [['search_docs', { query: 'What?' }, JSON.stringify(hits)]]),
      '[offline demo model] On "What?", "Doc A" says: "A says this." Also relevant: "Doc B".\nSources: Doc A; Doc B.',
    );
    t.equal(
      answer('Zebra?', [['search_docs', { query: 'Zebra?' }, '[]']]),
      '[offline demo model] The documents hold nothing on "Zebra?".',
    );
  });

  t.test('a failed call is passed on as the failure sentence the mesh wrote', async (t) => {
    const failure = 'Tool calculator execute failed: Division by zero at position 2.';
    t.equal(
      answer('1/0?', [['calculator', { expression: '1 / 0' }, failure]]),
      `[offline demo model] ${failure}`,
    );
  });

  t.test('without tool results the answer says it has nothing to go on', async (t) => {
    const text = composeAnswer(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).messages,
    );
    t.match(text, /^\[offline demo model\] I was given no tool results for "hi"/);
  });

  t.test('an output schema prompt turns the answer into JSON with every required property', async (t) => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, sources: { type: 'array', items: { type: 'string' } } },
      required: ['answer', 'sources'],
    };
    const hits = [{ doc: 'a', title: 'Doc A', excerpt: 'A says this.', score: 3 }];
    const text = answer(
      'What?',
      [['search_docs', { query: 'What?' }, JSON.stringify(hits)]],
      `Be brief.\nThe final response should be json format, and match the schema ${JSON.stringify(schema)}`,
    );
    t.match(JSON.parse(text), { answer: /^\[offline demo model\] On "What\?"/, sources: ['Doc A'] });
  });

  t.test(
    'fillSchema fills by type and name, honours enum and const, and recurses into objects',
    async (t) => {
      const findings = { text: 'T', titles: ['Doc A'], count: 2 };
      const schema = {
        type: 'object',
        properties: {
          verdict: { type: 'string' },
          level: { type: 'string', enum: ['high', 'low'] },
          kind: { const: 'report' },
          hits: { type: 'integer' },
          found: { type: 'boolean' },
          citations: { type: 'string' },
          points: { type: 'array', items: { type: 'string' } },
          detail: { type: 'object', properties: { summary: { type: 'string' } } },
          optional: { type: 'string' },
        },
        required: ['verdict', 'level', 'kind', 'hits', 'found', 'citations', 'points', 'detail'],
      };
      t.strictSame(fillSchema(schema, findings), {
        verdict: 'supported by 1 document(s)',
        level: 'high',
        kind: 'report',
        hits: 2,
        found: true,
        citations: 'Doc A',
        points: ['T'],
        detail: { summary: 'T' },
      });
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// The offline demo model over real HTTP, spoken to as an OpenAI Chat Completions client would.
t.test('the offline model over real HTTP, as an OpenAI Chat Completions client speaks to it', async (t) => {
  interface ToolCall {
    id: string;
    type: string;
    function: { name: string; arguments: string };
  }
  interface Completion {
    object: string;
    choices: {
      message: { role: string; content: string | null; tool_calls?: ToolCall[] };
      finish_reason: string;
    }[];
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  }

  const model = await startDemoModel({ port: 0 });
  t.teardown(() => model.close());

  const fn = (name: string, properties: Record<string, unknown>) => ({
    type: 'function',
    function: {
      name,
      description: `${name} tool`,
      parameters: { type: 'object', properties, required: Object.keys(properties) },
    },
  });
  const planner = [
    fn('calculator', { expression: { type: 'string' } }),
    fn('_subagent_researcher', { prompt: { type: 'string' } }),
    fn('_subagent_fact_checker', { prompt: { type: 'string' } }),
  ];
  const researcher = [fn('search_docs', { query: { type: 'string' }, k: { type: 'integer' } })];
  const QUESTION =
    'How does Redis persist data with the append-only file, how do BullMQ flows wait for children, and what is 2 * (16 + 4)?';

  async function chat(body: unknown): Promise<{ status: number; json: Completion & { error?: unknown } }> {
    const res = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Completion };
  }
  const ask = (messages: unknown[], tools: unknown[]) => chat({ model: 'gpt-4o-mini', messages, tools });

  t.test(
    'a planner delegates two or more parts in parallel, plus the calculator, in one reply',
    async (t) => {
      const { status, json } = await ask(
        [
          { role: 'system', content: 'You plan.' },
          { role: 'user', content: QUESTION },
        ],
        planner,
      );
      t.equal(status, 200);
      t.equal(json.object, 'chat.completion');
      const [choice] = json.choices;
      t.equal(choice?.finish_reason, 'tool_calls');
      t.equal(choice?.message.content, null);
      const calls = choice?.message.tool_calls ?? [];
      const delegations = calls.filter((c) => c.function.name.startsWith('_subagent_'));
      t.ok(delegations.length >= 2, `${delegations.length} delegations`);
      t.strictSame(
        new Set(delegations.map((c) => c.function.name)),
        new Set(['_subagent_researcher', '_subagent_fact_checker']),
      );
      for (const c of delegations) t.match(JSON.parse(c.function.arguments), { prompt: /\S/ });
      t.strictSame(JSON.parse(delegations[0]!.function.arguments), {
        prompt: 'How does Redis persist data with the append-only file',
      });
      const calculator = calls.find((c) => c.function.name === 'calculator');
      t.strictSame(JSON.parse(calculator?.function.arguments ?? '{}'), { expression: '2 * (16 + 4)' });
      t.equal(new Set(calls.map((c) => c.id)).size, calls.length, 'tool-call ids are unique');
      t.ok(json.usage.prompt_tokens > 0 && json.usage.completion_tokens > 0);
      t.equal(json.usage.total_tokens, json.usage.prompt_tokens + json.usage.completion_tokens);
    },
  );

  t.test(
    'a one-part question still goes to two sub-agents, and no calculator without arithmetic',
    async (t) => {
      const { json } = await ask([{ role: 'user', content: 'What is the ReAct pattern?' }], planner);
      const names = json.choices[0]?.message.tool_calls?.map((c) => c.function.name);
      t.strictSame(names, ['_subagent_researcher', '_subagent_fact_checker']);
    },
  );

  t.test('a researcher searches the docs with its prompt', async (t) => {
    const { json } = await ask(
      [
        { role: 'system', content: 'You research.' },
        { role: 'user', content: 'What is SSE?' },
      ],
      researcher,
    );
    const calls = json.choices[0]?.message.tool_calls ?? [];
    t.equal(calls.length, 1);
    t.equal(calls[0]?.function.name, 'search_docs');
    t.strictSame(JSON.parse(calls[0]!.function.arguments), { query: 'What is SSE?', k: 3 });
  });

  const hits = [
    {
      doc: 'server-sent-events',
      title: 'Server-Sent Events (SSE)',
      excerpt: 'Server-Sent Events let a server push events.',
      score: 5,
    },
  ];
  const afterSearch = [
    { role: 'user', content: 'What is SSE?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'search_docs', arguments: '{"query":"What is SSE?"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(hits) },
  ];

  t.test(
    'with tool results it answers with labelled text that quotes them and cites the titles',
    async (t) => {
      const { json } = await ask(afterSearch, researcher);
      const [choice] = json.choices;
      t.equal(choice?.finish_reason, 'stop');
      t.notOk(choice?.message.tool_calls);
      const content = choice?.message.content ?? '';
      t.ok(content.startsWith('[offline demo model] '), content);
      t.match(content, '"Server-Sent Events let a server push events."');
      t.match(content, 'Sources: Server-Sent Events (SSE).');
    },
  );

  t.test(
    'when a system message asks for a JSON schema, the answer is JSON with its required properties',
    async (t) => {
      const schema = {
        type: 'object',
        properties: { verdict: { type: 'string' }, evidence: { type: 'string' } },
        required: ['verdict', 'evidence'],
      };
      const system = {
        role: 'system',
        content: `The final response should be json format, and match the schema ${JSON.stringify(schema)}`,
      };
      const { json } = await ask([system, ...afterSearch], researcher);
      const answer = JSON.parse(json.choices[0]?.message.content ?? '');
      t.strictSame(Object.keys(answer), ['verdict', 'evidence']);
      t.match(answer, {
        verdict: /supported/,
        evidence: /^\[offline demo model\] .*Server-Sent Events let a server push events/s,
      });
    },
  );

  t.test('malformed requests get 400 with an OpenAI-style error body', async (t) => {
    const bad = [
      '{not json',
      { model: 'm' },
      { model: 'm', messages: [] },
      { messages: [{ role: 'user', content: 'hi' }] },
      { model: 'm', messages: [{ role: 'wizard', content: 'hi' }] },
      { model: 'm', messages: [{ role: 'tool', content: 'x' }] },
      {
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: {} }],
      },
    ];
    for (const body of bad) {
      const { status, json } = await chat(body);
      t.equal(status, 400, JSON.stringify(body));
      t.match(
        json.error,
        { message: String, type: 'invalid_request_error', code: String },
        JSON.stringify(body),
      );
    }
  });

  t.test('GET /v1/models lists the demo model and unknown URLs get 404', async (t) => {
    const models = await fetch(`${model.url}/models`);
    t.match(await models.json(), { object: 'list', data: [{ id: 'offline-demo-model', object: 'model' }] });
    const missing = await fetch(`${model.url}/embeddings`, { method: 'POST', body: '{}' });
    t.equal(missing.status, 404);
    t.match(await missing.json(), { error: { type: 'invalid_request_error', code: 'unknown_url' } });
  });

  /** A streamed answer's chunks, read from its Server-Sent Events; `[DONE]` last. */
  async function streamedChunks(
    body: Record<string, unknown>,
  ): Promise<{ type: string | null; events: any[] }> {
    const res = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    });
    const text = await res.text();
    const data = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice('data: '.length));
    t.equal(data.at(-1), '[DONE]', 'the stream ends with [DONE]');
    return { type: res.headers.get('content-type'), events: data.slice(0, -1).map((d) => JSON.parse(d)) };
  }

  t.test('asked to stream, it streams chunks that add up to the answer it gives unstreamed', async (t) => {
    const conversations = [
      {
        messages: [
          { role: 'system', content: 'You plan.' },
          { role: 'user', content: QUESTION },
        ],
        tools: planner,
      },
      { messages: [{ role: 'user', content: 'Say hello in a few words.' }], tools: [] },
    ];
    for (const { messages, tools } of conversations) {
      const body = { model: 'gpt-4o-mini', messages, tools };
      const plain = (await chat(body)).json.choices[0]!;
      const { type, events } = await streamedChunks(body);
      t.match(type, /^text\/event-stream/);
      t.ok(events.every((e) => e.object === 'chat.completion.chunk'));
      let content: string | null = null;
      const calls: { name: string; arguments: string }[] = [];
      let finish: string | undefined;
      for (const e of events.slice(0, -1)) {
        const choice = e.choices[0];
        if (typeof choice.delta.content === 'string') content = (content ?? '') + choice.delta.content;
        for (const c of choice.delta.tool_calls ?? []) {
          calls[c.index] ??= { name: '', arguments: '' };
          if (c.function.name) calls[c.index]!.name = c.function.name;
          calls[c.index]!.arguments += c.function.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
      t.equal(finish, plain.finish_reason);
      t.equal(content, plain.message.content, 'the content adds up');
      t.same(
        calls.map((c) => c.name),
        (plain.message.tool_calls ?? []).map((c) => c.function.name),
        'the same calls',
      );
      if (plain.message.content) t.ok(events.length > 3, 'word by word');
      const usage = events.at(-1);
      t.same(usage.choices, [], 'the last chunk carries the usage alone');
      t.ok(usage.usage.total_tokens > 0);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// The offline demo model exercises whatever an agent offers (docs/guides/getting-started.md): a callable the prompt
// names — a tool, a sub-agent with or without its `_subagent_` prefix — or every callable when it
// says "use all tools", is called with arguments built from its schema; then it answers from
// the results. Spoken to over HTTP as the runners speak to it.
t.test('the offline model calls whatever an agent offers that the prompt names', async (t) => {
  const model = await startDemoModel({ port: 0 });
  t.teardown(() => model.close());

  const fn = (name: string, parameters: Record<string, unknown>) => ({
    type: 'function',
    function: { name, description: `${name} callable`, parameters },
  });
  const PROMPT = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };
  const WEATHER = {
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 2, maxLength: 40 },
      days: { type: 'integer', minimum: 1, maximum: 7 },
      units: { type: 'string', enum: ['metric', 'imperial'] },
      detailed: { type: 'boolean' },
    },
    required: ['city', 'days', 'units', 'detailed'],
    additionalProperties: false,
  };
  // A newcomer's agent: a tool of their own and a sub-agent.
  const offered = [fn('get_weather', WEATHER), fn('_subagent_helper', PROMPT)];

  type Call = { id: string; function: { name: string; arguments: string } };
  async function ask(messages: unknown[], tools = offered) {
    const res = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages, tools }),
    });
    const json = (await res.json()) as {
      choices: { message: { content: string | null; tool_calls?: Call[] } }[];
    };
    return json.choices[0]!.message;
  }
  const user = (content: string) => ({ role: 'user', content });
  const calls = (m: { tool_calls?: Call[] }) =>
    (m.tool_calls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments)]);

  t.test(
    'a tool the prompt names is called, not the sub-agent, with arguments valid for its schema',
    async (t) => {
      const reply = await ask([user('What is the weather in Lyon for 3 days? Use get_weather.')]);
      const made = calls(reply);
      t.equal(made.length, 1);
      t.equal(made[0]![0], 'get_weather');
      const args = made[0]![1];
      t.ok(compileSchema(WEATHER)(args).ok, `valid: ${JSON.stringify(args)}`);
      t.match(args, { days: 3, units: 'metric', detailed: true });
    },
  );

  t.test('a sub-agent is named by its name, and gets the prompt', async (t) => {
    const text = 'Ask helper to summarise the week.';
    t.same(calls(await ask([user(text)])), [['_subagent_helper', { prompt: text }]]);
    t.same(
      calls(await ask([user('Delegate to _subagent_helper now')])).map((c) => c[0]),
      ['_subagent_helper'],
    );
    const plainTool = [fn('helper', PROMPT)];
    t.same(
      calls(await ask([user('no helpers here: unhelpful, helper_x, my-helper')], plainTool)),
      [],
      'whole words only',
    );
    t.same(
      calls(await ask([user('call HELPER.')], plainTool)),
      [['helper', { prompt: 'call HELPER.' }]],
      'case aside',
    );
  });

  t.test('"use all tools" calls every callable offered, in one reply', async (t) => {
    const reply = await ask([user('Please use all tools on this: Paris.')]);
    t.same(
      calls(reply).map((c) => c[0]),
      ['get_weather', '_subagent_helper'],
    );
  });

  t.test('then it answers from the results, quoting each', async (t) => {
    const first = await ask([user('use all the tools')]);
    const [weather, helper] = first.tool_calls!;
    const answer = await ask([
      user('use all the tools'),
      {
        role: 'assistant',
        content: null,
        tool_calls: first.tool_calls!.map((c) => ({ ...c, type: 'function' })),
      },
      { role: 'tool', tool_call_id: weather!.id, content: '{"forecast":"sunny","high":21}' },
      { role: 'tool', tool_call_id: helper!.id, content: 'The week was calm.' },
    ]);
    t.notOk(answer.tool_calls);
    t.match(answer.content, /^\[offline demo model\] /);
    t.match(answer.content, 'get_weather: forecast: sunny; high: 21');
    t.match(answer.content, 'helper');
    t.match(answer.content, 'The week was calm.');
  });

  t.test('a prompt that names nothing keeps the demo agents as they were', async (t) => {
    const reply = await ask([user('How does Redis persist data, and how do BullMQ flows wait?')]);
    t.same(
      calls(reply).map((c) => c[0]),
      ['_subagent_helper', '_subagent_helper'],
      'a planner delegates the parts',
    );
  });

  t.test('arguments follow the schema: defaults, enums, bounds, formats, nesting', async (t) => {
    const schema = {
      type: 'object',
      properties: {
        expression: { type: 'string' },
        title: { type: 'string', maxLength: 10 },
        code: { type: 'string', minLength: 8 },
        when: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
        level: { type: 'string', default: 'high' },
        ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        owner: {
          type: 'object',
          properties: { email: { type: 'string' }, age: { type: 'integer', minimum: 18 } },
          required: ['email', 'age'],
        },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        fixed: { const: 'v1' },
      },
      required: [
        'expression',
        'title',
        'code',
        'when',
        'site',
        'level',
        'ratio',
        'tags',
        'owner',
        'either',
        'fixed',
      ],
    };
    const args = fillArguments(schema, 'Add it up: 2 * (3 + 4). Then report');
    t.ok(compileSchema(schema)(args).ok, JSON.stringify(args));
    t.match(args, {
      expression: '2 * (3 + 4)',
      title: 'Add it up:',
      code: /^.{8,}$/,
      level: 'high',
      ratio: 1,
      tags: ['Add it up: 2 * (3 + 4). Then report', 'Add it up: 2 * (3 + 4). Then report'],
      owner: { email: 'someone@example.com', age: 18 },
      either: 2,
      fixed: 'v1',
    });
    t.ok(Date.parse(args.when as string) > 0);
    t.strictSame(fillArguments({ type: 'object' }, 'x'), {}, 'no properties, no arguments');
  });
});
