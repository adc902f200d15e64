import t from 'tap';
import { assertToolReferences, ConfigError, checkToolReferences, parseConfig } from '../src/config/index.js';

const FILE = '/srv/mesh.yaml';

const config = parseConfig(
  [
    'models:',
    '  default: {provider: openai, baseUrl: "http://127.0.0.1:9/v1", apiKey: "", model: demo}',
    'agents:',
    '  planner: {tools: [search_web, calc], subagents: [researcher]}',
    '  researcher: {tools: [fetch_page]}',
  ].join('\n'),
  FILE,
  {},
  'yaml',
);

t.test('a tool an agent lists that the catalogue lacks is a problem at its place in the list', async (t) => {
  t.strictSame(checkToolReferences(config, ['calc', 'fetch_page']), [
    {
      file: FILE,
      path: 'agents.planner.tools[0]',
      message: 'unknown tool "search_web" (catalogue: calc, fetch_page)',
    },
  ]);
});

t.test('every listed tool in the catalogue means no problem', async (t) => {
  t.strictSame(checkToolReferences(config, new Set(['calc', 'fetch_page', 'search_web'])), []);
});

t.test('an empty catalogue says so', async (t) => {
  t.strictSame(
    checkToolReferences(config, []).map((p) => `${p.path}: ${p.message}`),
    [
      'agents.planner.tools[0]: unknown tool "search_web" (catalogue: none)',
      'agents.planner.tools[1]: unknown tool "calc" (catalogue: none)',
      'agents.researcher.tools[0]: unknown tool "fetch_page" (catalogue: none)',
    ],
  );
});

t.test('the throwing variant throws one config error listing every unknown tool', async (t) => {
  t.doesNotThrow(() => assertToolReferences(config, ['calc', 'fetch_page', 'search_web']));
  const error = t.throws(() => assertToolReferences(config, ['calc'])) as unknown;
  t.ok(error instanceof ConfigError);
  t.equal(
    (error as ConfigError).message,
    [
      'Invalid mesh config (2 problems):',
      '/srv/mesh.yaml: agents.planner.tools[0]: unknown tool "search_web" (catalogue: calc)',
      '/srv/mesh.yaml: agents.researcher.tools[0]: unknown tool "fetch_page" (catalogue: calc)',
    ].join('\n'),
  );
});
