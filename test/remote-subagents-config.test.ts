// Remote agent entries in the config (docs/guides/a2a-and-remote-agents.md, docs/reference/bounds.md): `remote: {a2a, headers?, allowedOrigins?}` with its own
// description and input/output schemas; bad ones fail at start with the file, the path and the
// reason, every problem at once. The plan lists it as kind `remote` with the default prompt schema;
// logs never show its headers. Needs nothing running.
import { buildPlan, ConfigError, parseConfig, redactConfig } from '@agentmesh/shared';
import t from 'tap';

const head = `models:\n  default: {provider: openai, baseUrl: 'http://127.0.0.1:1/v1', apiKey: k, model: m}\nagents:\n`;
const parse = (agents: string, env: Record<string, string> = {}) =>
  parseConfig(head + agents, '/cfg/mesh.yaml', env, 'yaml');

/** The problems of a config that must not load, as `path: message`. */
const problemsOf = (agents: string): string[] => {
  try {
    parse(agents);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  throw new Error('the config loaded');
};

t.test('a remote entry loads with env-expanded headers and becomes a remote agent of the plan', async (t) => {
  const config = parse(
    `  boss: {instructions: hi, subagents: [helper]}
  helper:
    description: Answers on another mesh.
    remote: {a2a: 'https://b.example/a2a/worker/.well-known/agent-card.json', headers: {authorization: 'Bearer \${B_KEY}'}}
  quiz:
    remote: {a2a: 'http://127.0.0.1:9/card'}
    input: {type: object, properties: {question: {type: string}}, required: [question]}
    output: '{"type":"object","properties":{"n":{"type":"integer"}}}'
`,
    { B_KEY: 'secret' },
  );
  t.strictSame(config.agents.helper!.remote, {
    a2a: 'https://b.example/a2a/worker/.well-known/agent-card.json',
    headers: { authorization: 'Bearer secret' },
  });
  t.equal(config.agents.helper!.model, undefined, 'a remote agent gets no model');
  const plan = buildPlan(config, { tools: [] });
  t.equal(plan.agents.helper!.kind, 'remote');
  t.equal(plan.agents.boss!.kind, 'react');
  t.strictSame(plan.agents.helper!.inputSchema, {
    type: 'object',
    properties: { prompt: { type: 'string' } },
    required: ['prompt'],
    additionalProperties: false,
  });
  t.strictSame(plan.agents.quiz!.outputSchema, { type: 'object', properties: { n: { type: 'integer' } } });
  t.strictSame(
    plan.agents.boss!.callables.map((c) => c.name),
    ['_subagent_helper'],
  );
  t.equal(plan.agents.boss!.callables[0]!.description, 'Answers on another mesh. This is subagent.');
  const redacted = redactConfig(config);
  t.strictSame(redacted.agents.helper!.remote!.headers, { authorization: '***' }, 'logs never show headers');
  t.equal(config.agents.helper!.remote!.headers!.authorization, 'Bearer secret', 'the config itself is kept');
});

t.test('a bad remote entry reports every problem with its path', async (t) => {
  const problems = problemsOf(`  helper:
    remote:
      a2a: 'ftp://b.example/card'
      headers: {'bad header': x, Host: b.example, x-ok: "a\\nb"}
    model: default
    instructions: hi
    tools: [search]
    maxIterations: 3
`);
  t.strictSame(problems.sort(), [
    'agents.helper.instructions: a remote agent (remote:) takes no instructions: it runs on its own mesh',
    'agents.helper.maxIterations: a remote agent (remote:) takes no maxIterations: it runs on its own mesh',
    'agents.helper.model: a remote agent (remote:) takes no model: it runs on its own mesh',
    'agents.helper.remote.a2a: not an http(s) URL: "ftp://b.example/card"',
    'agents.helper.remote.headers.Host: set by the A2A client itself; remove it',
    'agents.helper.remote.headers.x-ok: contains a line break or NUL',
    'agents.helper.remote.headers["bad header"]: not a valid HTTP header name',
    'agents.helper.tools: a remote agent (remote:) takes no tools: it runs on its own mesh',
  ]);
});

t.test('the remote entry itself is checked by the schema: a2a required, nothing unknown', async (t) => {
  const problems = problemsOf(`  helper:
    remote: {url: 'http://b.example/card'}
`);
  t.ok(
    problems.some((p) => p.startsWith('agents.helper.remote')),
    problems.join('\n'),
  );
  const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-h${i}`, 'v']));
  const bounded = problemsOf(`  helper:
    remote: {a2a: 'http://b.example/card', headers: ${JSON.stringify(tooMany)}}
`);
  t.strictSame(bounded, ['agents.helper.remote.headers: at most 32 headers']);
  const long = problemsOf(`  helper:
    remote: {a2a: 'http://b.example/card', headers: {x-long: '${'v'.repeat(8193)}'}}
`);
  t.strictSame(long, ['agents.helper.remote.headers.x-long: longer than 8192 characters']);
});

t.test('allowedOrigins lists http(s) origins and nothing more, at most 32', async (t) => {
  const config = parse(`  helper:
    remote: {a2a: 'https://b.example/card', allowedOrigins: ['https://api.b.example', 'http://10.0.0.7:8080']}
`);
  t.strictSame(config.agents.helper!.remote!.allowedOrigins, [
    'https://api.b.example',
    'http://10.0.0.7:8080',
  ]);
  const problems = problemsOf(`  helper:
    remote: {a2a: 'https://b.example/card', allowedOrigins: ['ftp://b.example', 'https://b.example/a2a', 'nope', 7]}
`);
  t.strictSame(problems.sort(), [
    'agents.helper.remote.allowedOrigins[0]: not an http(s) origin: "ftp://b.example"',
    'agents.helper.remote.allowedOrigins[1]: an origin is scheme://host[:port] only, as "https://b.example": "https://b.example/a2a"',
    'agents.helper.remote.allowedOrigins[2]: not an origin: "nope"',
    'agents.helper.remote.allowedOrigins[3]: expected string',
  ]);
  const many = JSON.stringify(Array.from({ length: 33 }, (_, i) => `https://h${i}.example`));
  t.strictSame(
    problemsOf(`  helper:
    remote: {a2a: 'https://b.example/card', allowedOrigins: ${many}}
`),
    ['agents.helper.remote.allowedOrigins: at most 32 origins'],
  );
});
