// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
// The mesh config (src/config/): environment expansion, parsing and its problems, agent and MCP entry
// normalization, tool references, redaction, and loading files and modules from disk. loadConfig
// comes last: loading a mesh.config.ts registers tsx's loader for the rest of the process.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind } from '@sinclair/typebox';
import t from 'tap';
import {
  assertToolReferences,
  ConfigError,
  checkToolReferences,
  expandEnv,
  loadConfig,
  parseConfig,
  redactConfig,
} from '../src/config/index.js';
import { DEFAULT_TOOL_HOST } from '../src/defaults.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { importModule } from '../src/import-module.js';
import type { PlannerInput as PlannerInputType } from './fixtures/config/mesh.config.js';
import { FILE, MODEL, meshYaml, parse } from './fixtures/config/mesh-yaml.js';
import { problemsOf, problemsOfAsync } from './fixtures/config/problems-of.js';

t.test('expandEnv', async (t) => {
  // A valid config around one model entry; `extra` lines go under `models.default`.
  function oneModelYaml(...extra: string[]): string {
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
      oneModelYaml("apiKey: ''", 'maxConcurrency: ${N:-64}', 'timeoutMs: ${T}'),
      FILE,
      { T: '5000' },
      'yaml',
    );
    t.equal(config.models.default?.maxConcurrency, 64);
    t.equal(config.models.default?.timeoutMs, 5000);
  });

  t.test('a string-valued key keeps digits from the environment as a string', async (t) => {
    const config = parseConfig(oneModelYaml('apiKey: ${KEY}'), FILE, { KEY: '0123456' }, 'yaml');
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
    const problems = problemsOf(() =>
      parseConfig(oneModelYaml('apiKey: ${OPENAI_API_KEY}'), FILE, {}, 'yaml'),
    );
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
    const { problems } = expandEnv(
      { agents: { a: { tools: ['${}', '${1X}', 'pre ${X'] } } },
      { X: 'x' },
      FILE,
    );
    t.strictSame(problems, [
      { file: FILE, path: 'agents.a.tools[0]', message: 'bad environment reference "${}"' },
      { file: FILE, path: 'agents.a.tools[1]', message: 'bad environment reference "${1X}"' },
      { file: FILE, path: 'agents.a.tools[2]', message: 'bad environment reference "${X"' },
    ]);
  });

  t.test('a failed expansion is reported once, not again by the schema', async (t) => {
    const problems = problemsOf(() =>
      parseConfig(oneModelYaml("apiKey: ''", 'maxConcurrency: ${N}'), FILE, {}, 'yaml'),
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
});

t.test('parseConfig', async (t) => {
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
      [
        {
          file: FILE,
          path: 'agents.planner.model',
          message: 'unknown model "smart" (models: default, fast)',
        },
      ],
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
        {
          file: FILE,
          path: 'agents.planner.subagents[0]',
          message: 'unknown agent "ghost" (agents: planner)',
        },
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

  t.test(
    'a schema the validator cannot compile is a load-time problem, not a run-time failure',
    async (t) => {
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
        {
          file: FILE,
          path: 'agents.solo.input',
          message: /^not a valid JSON Schema: .*unsupported Perl syntax/,
        },
        { file: FILE, path: 'agents.solo.output', message: /^not a valid JSON Schema: / },
      ]);
    },
  );

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
});

t.test('normalizeAgent', async (t) => {
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
});

t.test('normalizeMcpEntry', async (t) => {
  const withTools = (...entries: string[]) =>
    ['models: {}', 'tools:', ...entries.map((e) => `  - ${e}`), 'agents: {}'].join('\n');

  t.test(
    'stdio and Streamable HTTP MCP entries load with their prefix, idempotent and timeout',
    async (t) => {
      const config = parse(
        withTools(
          '{mcp: {command: files-mcp}, prefix: fs_, idempotent: true}',
          '{mcp: {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer x"}}, timeoutMs: 5000}',
        ),
      );
      t.strictSame(config.tools, [
        { mcp: { command: 'files-mcp', args: [] }, prefix: 'fs_', idempotent: true },
        {
          mcp: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
          timeoutMs: 5000,
        },
      ]);
    },
  );

  t.test('an MCP entry that mixes or lacks command and url is refused at its path', async (t) => {
    t.strictSame(
      problemsOf(() =>
        parse(
          withTools(
            '{mcp: {command: a, url: "http://127.0.0.1:1/mcp"}}',
            '{mcp: {}}',
            '{mcp: {url: "http://127.0.0.1:1/mcp", args: [x], env: {A: b}}}',
            '{mcp: {command: a, headers: {A: b}}}',
            '{mcp: {url: "ftp://host/mcp"}, prefix: 3, idempotent: "yes", timeoutMs: 0, name: x}',
          ),
        ),
      ),
      [
        {
          file: FILE,
          path: 'tools[4].name',
          message: 'unknown key (allowed: mcp, prefix, idempotent, timeoutMs)',
        },
        { file: FILE, path: 'tools[4].prefix', message: 'expected string' },
        { file: FILE, path: 'tools[4].idempotent', message: 'expected boolean' },
        { file: FILE, path: 'tools[4].timeoutMs', message: 'expected integer to be greater or equal to 1' },
        {
          file: FILE,
          path: 'tools[0].mcp',
          message: 'give either command (a stdio server) or url (a Streamable HTTP server), not both',
        },
        {
          file: FILE,
          path: 'tools[1].mcp',
          message: 'give command (a stdio server) or url (a Streamable HTTP server)',
        },
        { file: FILE, path: 'tools[2].mcp.args', message: 'args go with command (a stdio server)' },
        { file: FILE, path: 'tools[2].mcp.env', message: 'env goes with command (a stdio server)' },
        {
          file: FILE,
          path: 'tools[3].mcp.headers',
          message: 'headers go with url (a Streamable HTTP server)',
        },
        { file: FILE, path: 'tools[4].mcp.url', message: 'not an http(s) URL: "ftp://host/mcp"' },
      ],
    );
  });

  t.test('a redacted config hides MCP header values', async (t) => {
    const config = parseConfig(
      withTools(
        '{mcp: {url: "http://127.0.0.1:1/mcp", headers: {Authorization: "Bearer ${TOKEN}"}}, prefix: gh_}',
      ),
      FILE,
      { TOKEN: 'secret' },
      'yaml',
    );
    t.strictSame(config.tools[0], {
      mcp: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer secret' } },
      prefix: 'gh_',
    });
    t.strictSame(redactConfig(config).tools, [
      { mcp: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: '***' } }, prefix: 'gh_' },
    ]);
  });
});

t.test('checkToolReferences', async (t) => {
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

  t.test(
    'a tool an agent lists that the catalogue lacks is a problem at its place in the list',
    async (t) => {
      t.strictSame(checkToolReferences(config, ['calc', 'fetch_page']), [
        {
          file: FILE,
          path: 'agents.planner.tools[0]',
          message: 'unknown tool "search_web" (catalogue: calc, fetch_page)',
        },
      ]);
    },
  );

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
});

t.test('redactConfig', async (t) => {
  const config = parseConfig(
    [
      'models:',
      '  default: {provider: openai, baseUrl: "http://127.0.0.1:9/v1", apiKey: "${KEY}", model: demo}',
      '  local: {provider: openai, baseUrl: "http://127.0.0.1:11434/v1", apiKey: "", model: llama}',
      'tools:',
      '  - mcp: {command: github-mcp, env: {GITHUB_TOKEN: "${GH}"}}',
      'agents:',
      '  solo: {}',
    ].join('\n'),
    '/srv/mesh.yaml',
    { KEY: 'sk-secret', GH: 'ghp_secret' },
    'yaml',
  );

  t.test('a redacted config hides API keys and MCP server env values, and nothing else', async (t) => {
    const redacted = redactConfig(config);
    t.equal(redacted.models.default?.apiKey, '***');
    t.equal(redacted.models.local?.apiKey, '', 'an empty key stays visible as empty');
    t.strictSame(redacted.tools, [
      { mcp: { command: 'github-mcp', args: [], env: { GITHUB_TOKEN: '***' } } },
    ]);
    t.equal(redacted.models.default?.model, 'demo');
    t.equal(redacted.agents, config.agents);
    t.notMatch(JSON.stringify(redacted), /secret/);
  });

  t.test('redacting leaves the original config untouched', async (t) => {
    redactConfig(config);
    t.equal(config.models.default?.apiKey, 'sk-secret');
    t.ok(Object.isFrozen(redactConfig(config).models.default));
  });
});

t.test('loadConfig', async (t) => {
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
      {
        file,
        path: '(root)',
        message: 'cannot import the config module: the config module failed on purpose',
      },
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
});
