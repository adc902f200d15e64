// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
import t from 'tap';
import { expandEnv, parseConfig } from '../src/config/index.js';
import { problemsOf } from './fixtures/config/problems-of.js';

const FILE = '/srv/mesh.yaml';

// A valid config around one model entry; `extra` lines go under `models.default`.
function meshYaml(...extra: string[]): string {
  return [
    'models:',
    '  default:',
    '    provider: openai',
    '    baseUrl: http://127.0.0.1:9/v1',
    '    model: demo',
    ...extra.map((line) => `    ${line}`),
    'agents:',
    '  solo:',
    '    instructions: Answer.',
  ].join('\n');
}

t.test('a set variable replaces its reference, inside longer text too', async (t) => {
  const { value, problems } = expandEnv(
    { a: '${HOST}', b: 'http://${HOST}:${PORT}/v1' },
    { HOST: 'h', PORT: '80' },
    FILE,
  );
  t.strictSame(value, { a: 'h', b: 'http://h:80/v1' });
  t.strictSame(problems, []);
});

t.test(
  'a default applies when the variable is unset or empty, and an empty default gives an empty string',
  async (t) => {
    const tree = {
      unset: '${A:-fallback}',
      empty: '${E:-fallback}',
      bare: '${E}',
      none: '${A:-}',
      nested: '${A:-${B:-z}}',
    };
    const { value, problems } = expandEnv(tree, { E: '' }, FILE);
    t.strictSame(value, { unset: 'fallback', empty: 'fallback', bare: '', none: '', nested: 'z' });
    t.strictSame(problems, []);
  },
);

t.test(
  'a whole-scalar reference that reads as a number or boolean becomes one; text around it keeps a string',
  async (t) => {
    const tree = { n: '${N:-64}', f: '${F}', b: '${B}', s: 'x${N:-64}', word: '${W}' };
    const { value } = expandEnv(tree, { F: '1.5', B: 'true', W: 'yes' }, FILE);
    t.strictSame(value, { n: 64, f: 1.5, b: true, s: 'x64', word: 'yes' });
  },
);

t.test('a number-valued config key gets a number from the environment', async (t) => {
  const config = parseConfig(
    meshYaml("apiKey: ''", 'maxConcurrency: ${N:-64}', 'timeoutMs: ${T}'),
    FILE,
    { T: '5000' },
    'yaml',
  );
  t.equal(config.models.default?.maxConcurrency, 64);
  t.equal(config.models.default?.timeoutMs, 5000);
});

t.test('a string-valued key keeps digits from the environment as a string', async (t) => {
  const config = parseConfig(meshYaml('apiKey: ${KEY}'), FILE, { KEY: '0123456' }, 'yaml');
  t.equal(config.models.default?.apiKey, '0123456');
});

t.test('$${ is a literal ${ and is never expanded', async (t) => {
  const { value, problems } = expandEnv(
    { a: 'cost: $${PRICE} and ${X}', b: '$${N}' },
    { X: 'x', N: '1' },
    FILE,
  );
  t.strictSame(value, { a: 'cost: ${PRICE} and x', b: '${N}' });
  t.strictSame(problems, []);
});

t.test('an unset variable without a default is a problem at the path of its scalar', async (t) => {
  const problems = problemsOf(() => parseConfig(meshYaml('apiKey: ${OPENAI_API_KEY}'), FILE, {}, 'yaml'));
  t.strictSame(problems, [
    {
      file: FILE,
      path: 'models.default.apiKey',
      message:
        'environment variable OPENAI_API_KEY is not set (use ${OPENAI_API_KEY:-default} for a default)',
    },
  ]);
});

t.test('a malformed reference is a problem naming the reference', async (t) => {
  const { problems } = expandEnv({ agents: { a: { tools: ['${}', '${1X}', 'pre ${X'] } } }, { X: 'x' }, FILE);
  t.strictSame(problems, [
    { file: FILE, path: 'agents.a.tools[0]', message: 'bad environment reference "${}"' },
    { file: FILE, path: 'agents.a.tools[1]', message: 'bad environment reference "${1X}"' },
    { file: FILE, path: 'agents.a.tools[2]', message: 'bad environment reference "${X"' },
  ]);
});

t.test('a failed expansion is reported once, not again by the schema', async (t) => {
  const problems = problemsOf(() =>
    parseConfig(meshYaml("apiKey: ''", 'maxConcurrency: ${N}'), FILE, {}, 'yaml'),
  );
  t.strictSame(
    problems.map((p) => p.path),
    ['models.default.maxConcurrency'],
  );
});

t.test('keys are never expanded, only string values', async (t) => {
  const { value } = expandEnv({ '${K}': '${K}' }, { K: 'v' }, FILE);
  t.strictSame(value, { '${K}': 'v' });
});

t.test('a cycle in the tree (YAML aliases, a module) is a problem, not a crash', async (t) => {
  const agent: Record<string, unknown> = { instructions: 'x' };
  agent.self = agent;
  const { problems } = expandEnv({ agents: { a: agent } }, {}, FILE);
  t.strictSame(problems, [{ file: FILE, path: 'agents.a.self', message: 'circular reference' }]);
});
