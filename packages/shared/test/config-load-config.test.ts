// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind } from '@sinclair/typebox';
import t from 'tap';
import { loadConfig } from '../src/config/index.js';
import { importModule } from '../src/import-module.js';
import type { PlannerInput as PlannerInputType } from './fixtures/config/mesh.config.js';
import { problemsOfAsync } from './fixtures/config/problems-of.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'config');
const fixture = (name: string) => join(DIR, name);

t.test('the example config of the design loads with defaults applied', async (t) => {
  const config = await loadConfig(fixture('full.yaml'), { MODEL: 'gpt-4.1-mini' });
  t.strictSame(config, {
    file: fixture('full.yaml'),
    models: {
      default: {
        provider: 'openai',
        baseUrl: 'https://api.openai.com/v1',
        apiKey: '',
        model: 'gpt-4.1-mini',
        maxConcurrency: 64,
      },
    },
    toolHost: 'http://127.0.0.1:3002',
    tools: [fixture('tools/index.ts')],
    agents: {
      planner: {
        tools: ['search_web'],
        subagents: ['researcher'],
        description: 'Splits a research question and delegates the parts.',
        instructions: 'You plan research ...',
        maxIterations: 8,
        model: 'default',
      },
      researcher: {
        tools: [],
        subagents: [],
        description: 'Answers one focused question with sources.',
        instructions: 'You research ...',
        input: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
        output: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
        maxIterations: 10,
        model: 'default',
      },
    },
  });
});

t.test('the loaded config is frozen all the way down', async (t) => {
  const config = await loadConfig(fixture('full.yaml'), {});
  const input = config.agents.researcher?.input as { properties: { prompt: object } };
  for (const part of [
    config,
    config.models.default,
    config.tools,
    config.agents.planner?.tools,
    input.properties.prompt,
  ]) {
    t.ok(Object.isFrozen(part));
  }
  t.throws(() => {
    (config.agents as Record<string, unknown>).intruder = {};
  }, TypeError);
});

t.test('a missing file is a config error naming the file', async (t) => {
  const file = fixture('absent.yaml');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    { file, path: '(root)', message: 'cannot read the config: no such file' },
  ]);
  const module = fixture('absent.config.ts');
  t.strictSame(await problemsOfAsync(() => loadConfig(module, {})), [
    { file: module, path: '(root)', message: 'cannot read the config: no such file' },
  ]);
});

t.test('a file of another type is refused by name', async (t) => {
  const file = fixture('mesh.toml');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    {
      file,
      path: '(root)',
      message: 'unsupported file type ".toml" (use .yaml, .yml, .json, .ts, .mts, .js or .mjs)',
    },
  ]);
});

t.test('a YAML syntax error in a file names the file and the line', async (t) => {
  // Written at test time: a broken YAML fixture would break the repository's lint.
  const file = join(
    t.testdir({ 'mesh.yaml': 'agents:\n  planner:\n    instructions: Answer like this: short\n' }),
    'mesh.yaml',
  );
  const problems = await problemsOfAsync(() => loadConfig(file, {}));
  t.strictSame(
    problems.map((p) => [p.file, p.path]),
    [[file, 'line 3, column 19']],
  );
  t.match(problems[0]?.message, /^invalid YAML: Nested mappings are not allowed in compact mappings/);
});

t.test('every problem of a file is reported by one load', async (t) => {
  const file = fixture('many-problems.yaml');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    {
      file,
      path: 'models.default.apiKey',
      message:
        'environment variable OPENAI_API_KEY is not set (use ${OPENAI_API_KEY:-default} for a default)',
    },
    { file, path: 'agents.planner.maxIteratons', message: 'unknown key (did you mean "maxIterations"?)' },
    {
      file,
      path: 'agents.planner.subagents[0]',
      message: 'unknown agent "resercher" (agents: planner, researcher)',
    },
    { file, path: 'agents.researcher.model', message: 'unknown model "fast" (models: default)' },
  ]);
});

t.test('a mesh.config.ts loads, with env expansion and its TypeBox input kept as it is', async (t) => {
  const config = await loadConfig(fixture('mesh.config.ts'), { OPENAI_API_KEY: 'sk-test' });
  // The module as the config loader imports it (a user's module: compiled, through tsx's loader).
  const { PlannerInput } = (await importModule(fixture('mesh.config.ts'))) as {
    PlannerInput: typeof PlannerInputType;
  };
  t.equal(config.agents.planner?.input, PlannerInput, 'the very same TypeBox object');
  t.equal((config.agents.planner!.input as Record<symbol, unknown>)[Kind], 'Object');
  t.equal(PlannerInput.properties.prompt.description, 'literal ${NOT_AN_ENV_VAR}');
  t.equal(config.models.default?.apiKey, 'sk-test');
  t.equal(config.models.default?.maxConcurrency, 4);
  t.strictSame(config.agents.coder?.output, { type: 'string' });
  t.equal(config.agents.coder?.module, fixture('agents/coder.ts'));
  t.ok(Object.isFrozen(config.agents.planner));
});

t.test('a mesh.config.ts with an unset variable fails like a YAML file would', async (t) => {
  const file = fixture('mesh.config.ts');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    {
      file,
      path: 'models.default.apiKey',
      message:
        'environment variable OPENAI_API_KEY is not set (use ${OPENAI_API_KEY:-default} for a default)',
    },
  ]);
});

t.test('a config module without a default export is a config error', async (t) => {
  const file = fixture('no-default.mjs');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    {
      file,
      path: '(root)',
      message: 'the module has no default export (export default { models, tools, agents })',
    },
  ]);
});

t.test('a config module that throws while loading is a config error naming it', async (t) => {
  const file = fixture('throws.mjs');
  t.strictSame(await problemsOfAsync(() => loadConfig(file, {})), [
    { file, path: '(root)', message: 'cannot import the config module: the config module failed on purpose' },
  ]);
});

t.test('a JSON config loads, and its JSON-string input is parsed', async (t) => {
  const config = await loadConfig(fixture('config.json'), {});
  t.strictSame(config.agents.solo?.input, { type: 'object' });
  t.equal(config.agents.solo?.model, 'default');
});

t.test('module paths are resolved against the directory of the config file', async (t) => {
  const config = await loadConfig(fixture('nested/mesh.yaml'), {});
  t.strictSame(config.tools, [
    fixture('nested/tools/index.ts'),
    fixture('shared-tools/math.mjs'),
    fixture('nested/tools/extra.ts'),
    '/opt/tools/abs.ts',
    '/opt/tools/url.ts',
    '@acme/mesh-tools',
    'acme-tools',
    { mcp: { command: 'npx', args: [] } },
  ]);
  t.equal(config.agents.coder?.module, fixture('nested/agents/coder.ts'));
});

t.test(
  'a blank sub-agent input schema in a file fails loading with the file, path and upstream text',
  async (t) => {
    await t.rejects(loadConfig(fixture('blank-input.yaml'), {}), {
      code: 'invalid_config',
      message: `${fixture('blank-input.yaml')}: agents.researcher.input: Sub-agent input schema must not be blank.`,
    });
  },
);
