// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
import t from 'tap';
import { ConfigError, parseConfig } from '../src/config/index.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { FILE, MODEL, meshYaml, parse } from './fixtures/config/mesh-yaml.js';
import { problemsOf } from './fixtures/config/problems-of.js';

t.test('an unknown sub-agent is reported at its place in the list', async (t) => {
  const text = meshYaml(
    ['default'],
    ['planner: {instructions: Plan., subagents: [researcher, resercher]}', 'researcher: {}'],
  );
  t.strictSame(
    problemsOf(() => parse(text)),
    [
      {
        file: FILE,
        path: 'agents.planner.subagents[1]',
        message: 'unknown agent "resercher" (agents: planner, researcher)',
      },
    ],
  );
});

t.test('an unknown model is reported at the agent that names it', async (t) => {
  const text = meshYaml(['default', 'fast'], ['planner: {model: smart}']);
  t.strictSame(
    problemsOf(() => parse(text)),
    [{ file: FILE, path: 'agents.planner.model', message: 'unknown model "smart" (models: default, fast)' }],
  );
});

t.test('an agent name that cannot be a function name is a problem', async (t) => {
  const text = meshYaml(['default'], ['"plan ner": {}', 'ok: {tools: [search web]}']);
  t.strictSame(
    problemsOf(() => parse(text)),
    [
      {
        file: FILE,
        path: 'agents.ok.tools[0]',
        message: 'invalid name "search web": must match ^[a-zA-Z0-9_-]{1,54}$',
      },
      { file: FILE, path: 'agents["plan ner"]', message: 'invalid name: must match ^[a-zA-Z0-9_-]{1,54}$' },
    ],
  );
});

t.test('an unknown key is a problem, with the likely intended key when it is a typo', async (t) => {
  const text = meshYaml(
    ['default'],
    ['planner: {instructions: Plan., subagent: [x]}'],
    ['toolhost: http://h'],
  );
  t.strictSame(
    problemsOf(() => parse(text)),
    [
      { file: FILE, path: 'toolhost', message: 'unknown key (did you mean "toolHost"?)' },
      { file: FILE, path: 'agents.planner.subagent', message: 'unknown key (did you mean "subagents"?)' },
    ],
  );
});

t.test('a YAML syntax error names the file, line and column', async (t) => {
  const text = meshYaml(['default'], ['solo: {instructions: Answer like this: short}']);
  const problems = problemsOf(() => parse(text));
  t.strictSame(
    problems.map((p) => [p.file, p.path]),
    [[FILE, 'line 8, column 24']],
  );
  t.match(problems[0]?.message, /^invalid YAML: /);
});

t.test('a JSON syntax error names the file, line and column', async (t) => {
  const problems = problemsOf(() => parseConfig('{\n  "agents": {,}\n}', '/srv/mesh.json', {}, 'json'));
  t.strictSame(
    problems.map((p) => [p.file, p.path]),
    [['/srv/mesh.json', 'line 2, column 14']],
  );
  t.match(problems[0]?.message, /^invalid JSON: /);
});

t.test(
  'a config error is a MeshError with code invalid_config whose message lists every problem',
  async (t) => {
    const text = meshYaml(['default'], ['planner: {model: smart, subagents: [nobody]}']);
    const error = t.throws(() => parse(text)) as unknown;
    t.ok(error instanceof ConfigError);
    t.ok(isMeshError(error, 'invalid_config'));
    t.equal(
      (error as ConfigError).message,
      [
        'Invalid mesh config (2 problems):',
        '/srv/mesh.yaml: agents.planner.model: unknown model "smart" (models: default)',
        '/srv/mesh.yaml: agents.planner.subagents[0]: unknown agent "nobody" (agents: planner)',
      ].join('\n'),
    );
  },
);

t.test('every kind of problem in one file is reported by one error', async (t) => {
  const text = [
    'models:',
    '  default:',
    '    provider: anthropic',
    '    baseUrl: ${BASE}',
    "    apiKey: ''",
    '    model: demo',
    '    maxConcurrency: 0',
    'tools: [./t.ts, {mcp: {command: 1}}]',
    'agents:',
    '  planner: {subagents: [ghost], maxIterations: 5000, input: 7}',
  ].join('\n');
  t.strictSame(
    problemsOf(() => parse(text)),
    [
      {
        file: FILE,
        path: 'models.default.baseUrl',
        message: 'environment variable BASE is not set (use ${BASE:-default} for a default)',
      },
      { file: FILE, path: 'models.default.provider', message: "expected 'openai'" },
      {
        file: FILE,
        path: 'models.default.maxConcurrency',
        message: 'expected integer to be greater or equal to 1',
      },
      { file: FILE, path: 'tools[1].mcp.command', message: 'expected string' },
      {
        file: FILE,
        path: 'agents.planner.maxIterations',
        message: 'expected integer to be less or equal to 1000',
      },
      {
        file: FILE,
        path: 'agents.planner.input',
        message: 'expected a JSON Schema mapping or a JSON string',
      },
      { file: FILE, path: 'agents.planner.subagents[0]', message: 'unknown agent "ghost" (agents: planner)' },
    ],
  );
});

t.test('a model URL that is not http(s) is a problem', async (t) => {
  const text = meshYaml(
    [],
    ['solo: {model: m}'],
    ['  m:', ...MODEL.map((l) => l.replace('http://127.0.0.1:9/v1', 'localhost:9'))],
  );
  t.strictSame(
    problemsOf(() => parse(text)),
    [{ file: FILE, path: 'models.m.baseUrl', message: 'not an http(s) URL: "localhost:9"' }],
  );
});

t.test(
  "a blank input or output schema string is refused with upstream's text, naming the file and path",
  async (t) => {
    const text = meshYaml(['default'], ['solo: {input: "   ", output: ""}']);
    const error = t.throws(() => parse(text)) as ConfigError;
    t.strictSame(error.problems, [
      { file: FILE, path: 'agents.solo.input', message: 'Sub-agent input schema must not be blank.' },
      { file: FILE, path: 'agents.solo.output', message: 'Sub-agent output schema must not be blank.' },
    ]);
    t.match(error.message, `${FILE}: agents.solo.input: Sub-agent input schema must not be blank.`);
  },
);

t.test('a schema the validator cannot compile is a load-time problem, not a run-time failure', async (t) => {
  const text = meshYaml(
    ['default'],
    [
      'solo:',
      "  input: {type: object, properties: {code: {type: string, pattern: '^(?=a)a$'}}}",
      '  output: {type: objekt}',
    ],
  );
  const error = t.throws(() => parse(text)) as ConfigError;
  t.match(error.problems, [
    { file: FILE, path: 'agents.solo.input', message: /^not a valid JSON Schema: .*unsupported Perl syntax/ },
    { file: FILE, path: 'agents.solo.output', message: /^not a valid JSON Schema: / },
  ]);
});

t.test(
  'a model entry may say stream: false (absent, the runner streams); anything but a boolean is a problem',
  async (t) => {
    const withModel = (extra: string[]) =>
      parse(
        [
          'models:',
          '  default:',
          ...MODEL,
          ...extra.map((l) => `    ${l}`),
          'agents:',
          '  a: {instructions: hi}',
        ].join('\n'),
      );
    t.equal(withModel(['stream: false']).models.default?.stream, false);
    t.equal(withModel([]).models.default?.stream, undefined);
    t.strictSame(
      problemsOf(() => withModel(['stream: "no"'])).map((p) => p.path),
      ['models.default.stream'],
    );
  },
);
