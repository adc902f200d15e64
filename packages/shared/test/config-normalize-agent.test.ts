import t from 'tap';
import { parseConfig } from '../src/config/index.js';
import { DEFAULT_TOOL_HOST } from '../src/defaults.js';
import { FILE, meshYaml, parse } from './fixtures/config/mesh-yaml.js';
import { problemsOf } from './fixtures/config/problems-of.js';

t.test('an input given as a JSON string is parsed into a schema', async (t) => {
  const text = meshYaml(['default'], [`solo: {input: '{"type": "object", "required": ["q"]}'}`]);
  t.strictSame(parse(text).agents.solo?.input, { type: 'object', required: ['q'] });
});

t.test('an input string that is not JSON is a problem at agents.<name>.input', async (t) => {
  const text = meshYaml(['default'], ["solo: {input: '{type: object}', output: '[1]'}"]);
  const problems = problemsOf(() => parse(text));
  t.strictSame(
    problems.map((p) => [p.file, p.path]),
    [
      [FILE, 'agents.solo.input'],
      [FILE, 'agents.solo.output'],
    ],
  );
  t.match(problems[0]?.message, /^invalid JSON: /);
  t.equal(problems[1]?.message, 'the JSON must be an object (a JSON Schema)');
});

t.test('without model: an agent gets the model named default', async (t) => {
  t.equal(parse(meshYaml(['fast', 'default'], ['solo: {}'])).agents.solo?.model, 'default');
});

t.test('without model: an agent gets the only model when there is exactly one', async (t) => {
  t.equal(parse(meshYaml(['fast'], ['solo: {}'])).agents.solo?.model, 'fast');
});

t.test('without model: with several models and none named default the model is required', async (t) => {
  t.strictSame(
    problemsOf(() => parse(meshYaml(['fast', 'smart'], ['solo: {}']))),
    [{ file: FILE, path: 'agents.solo.model', message: 'required (models: fast, smart)' }],
  );
});

t.test('a code agent takes neither instructions nor tools', async (t) => {
  const text = meshYaml(
    ['default'],
    ['coder: {module: ./coder.ts, instructions: Code., tools: [search_web]}'],
  );
  t.strictSame(
    problemsOf(() => parse(text)),
    [
      {
        file: FILE,
        path: 'agents.coder.instructions',
        message: 'only a ReAct agent takes instructions; this one is a code agent (module)',
      },
      {
        file: FILE,
        path: 'agents.coder.tools',
        message: 'only a ReAct agent takes tools; this one is a code agent (module)',
      },
    ],
  );
});

t.test('a code agent needs no model, so a mesh of code agents needs no models', async (t) => {
  const config = parseConfig('agents:\n  coder: {module: ./coder.ts}\n', FILE, {}, 'yaml');
  t.strictSame(config.agents.coder, { tools: [], subagents: [], module: '/srv/coder.ts' });
  t.strictSame(config.models, {});
  t.equal(config.toolHost, DEFAULT_TOOL_HOST);
});

t.test(
  'a tool or sub-agent listed twice, or a tool named like a sub-agent callable, is a problem',
  async (t) => {
    const text = meshYaml(['default'], ['a: {tools: [x, _subagent_b, x], subagents: [b, b]}', 'b: {}']);
    t.strictSame(
      problemsOf(() => parse(text)),
      [
        { file: FILE, path: 'agents.a.tools[2]', message: '"x" is listed twice' },
        { file: FILE, path: 'agents.a.subagents[1]', message: '"b" is listed twice' },
        {
          file: FILE,
          path: 'agents.a.tools[1]',
          message: 'tool names may not start with "_subagent_" (reserved for sub-agents)',
        },
      ],
    );
  },
);
