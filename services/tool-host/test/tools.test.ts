// What the tool-host serves as tools: native definitions and tool modules loaded and checked
// (src/load-tools.ts), and an MCP tool's call result as the tool's result (src/mcp/mcp-call-result.ts).
// MCP servers mounted over stdio and HTTP are mcp-mount.test.ts.
import path from 'node:path';
import { ConfigError, parseConfig, type ToolRunContext } from '@agentmesh/shared';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { loadToolDefinitions, loadTools } from '../src/load-tools.js';
import { mcpCallResult } from '../src/mcp/mcp-call-result.js';

// loadToolDefinitions and loadTools: every problem of the definitions and modules a config names,
// reported at once at its path; a TypeBox input as its JSON Schema; each export served once.
t.test('loadToolDefinitions and loadTools', async (t) => {
  const fixtures = path.join(import.meta.dirname, 'fixtures');
  const configFile = path.join(import.meta.dirname, 'mesh.yaml');
  const configWith = (tools: string[]) =>
    parseConfig(`models: {}\ntools: [${tools.join(', ')}]\nagents: {}\n`, configFile, {}, 'yaml');
  const run = () => 'ok';
  const problemsOf = async (f: () => unknown): Promise<ConfigError> => {
    try {
      await f();
    } catch (e) {
      if (e instanceof ConfigError) return e;
      throw e;
    }
    throw new Error('expected a ConfigError');
  };

  t.test('a tool named _subagent_x is refused: the prefix is reserved for sub-agents', async (t) => {
    const e = await problemsOf(() =>
      loadToolDefinitions([{ name: '_subagent_x', description: 'x', input: { type: 'object' }, run }]),
    );
    t.equal(e.code, 'invalid_config');
    t.match(e.message, /must not start with the reserved prefix '_subagent_'/);
    t.strictSame(e.problems, [
      {
        file: '(code)',
        path: 'tools[0]',
        message: "Tool name _subagent_x must not start with the reserved prefix '_subagent_'.",
      },
    ]);
  });

  t.test('every bad definition is reported at once, each at its path', async (t) => {
    const e = await problemsOf(() =>
      loadToolDefinitions(
        [
          { name: 'has space', description: 'x', input: { type: 'object' }, run },
          {
            name: 'ok',
            description: 5 as unknown as string,
            input: { type: 'object' },
            run: 'nope' as never,
          },
          { name: 'slow', description: 'x', input: { type: 'object' }, timeoutMs: 0, run },
          { name: 'ok', description: 'a twin', input: { type: 'object' }, run: () => 'other' },
          { name: 'ok2', description: 'x', input: { type: 'object' }, run },
          { name: 'ok2', description: 'another twin', input: { type: 'object' }, run: () => 'other' },
          { name: 'x'.repeat(55), description: 'x', input: { type: 'object' }, run },
        ],
        '/srv/tools.ts',
      ),
    );
    t.strictSame(
      e.problems.map((p) => `${p.file}: ${p.path}: ${p.message}`),
      [
        '/srv/tools.ts: tools[0]: tool name must match ^[a-zA-Z0-9_-]{1,54}$',
        '/srv/tools.ts: tools[1]: description must be a string',
        '/srv/tools.ts: tools[1]: run must be a function',
        '/srv/tools.ts: tools[2]: timeoutMs must be a positive integer',
        '/srv/tools.ts: tools[5]: duplicate tool name "ok2"',
        '/srv/tools.ts: tools[6]: tool name must match ^[a-zA-Z0-9_-]{1,54}$',
      ],
    );
    t.match(e.message, /^Invalid mesh config \(6 problems\):\n\/srv\/tools.ts: tools\[0\]: /);
  });

  t.test('an input schema that does not describe a JSON object is refused', async (t) => {
    const e = await problemsOf(() =>
      loadToolDefinitions([
        { name: 'a', description: 'x', input: { type: 'string' }, run },
        { name: 'b', description: 'x', input: '{not json', run },
      ]),
    );
    t.strictSame(
      e.problems.map((p) => p.path),
      ['tools[0]', 'tools[1]'],
    );
    t.match(e.problems[0]!.message, /must describe a JSON object/);
    t.match(e.problems[1]!.message, /must be valid JSON/);
  });

  t.test('a schema the validator cannot compile fails the load, not every call', async (t) => {
    const e = await problemsOf(() =>
      loadToolDefinitions([
        {
          name: 'a',
          description: 'x',
          input: { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } },
          run,
        },
      ]),
    );
    t.strictSame(
      e.problems.map((p) => p.path),
      ['tools[0]'],
    );
    t.match(e.problems[0]!.message, /^input: .*invalid escape sequence/);
  });

  t.test('a TypeBox input becomes its JSON Schema in the catalogue', async (t) => {
    const [tool] = loadToolDefinitions([
      {
        name: 'search',
        description: 'Searches.',
        input: Type.Object({ q: Type.String(), limit: Type.Optional(Type.Integer()) }),
        run,
      },
    ]);
    t.strictSame(tool!.info, {
      name: 'search',
      description: 'Searches.',
      input: {
        type: 'object',
        properties: { q: { type: 'string' }, limit: { type: 'integer' } },
        required: ['q'],
      },
      idempotent: false,
      source: 'native',
    });
  });

  t.test('a module file serves its default, named and array exports, each definition once', async (t) => {
    const tools = await loadTools(configWith(['./fixtures/tools-module.ts', './fixtures/plain-tools.mjs']));
    t.strictSame(tools.map((x) => x.info.name).sort(), ['add', 'clock', 'multiply', 'shout', 'weather']);
    const weather = tools.find((x) => x.info.name === 'weather')!;
    t.strictSame(weather.info, {
      name: 'weather',
      description: 'Says the weather in a city.',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      idempotent: true,
      source: 'native',
      timeoutMs: 2000,
    });
    const ctx = {} as ToolRunContext;
    t.equal(await weather.run({ city: 'Oslo' }, ctx), 'sunny in Oslo');
    t.equal(await tools.find((x) => x.info.name === 'multiply')!.run({ a: 6, b: 7 }, ctx), 42);
    t.equal(await tools.find((x) => x.info.name === 'shout')!.run({ text: 'hey' }, ctx), 'HEY');
  });

  t.test(
    'modules with a reserved name, a name clash or no file fail together, naming file and path; MCP entries are left to mountMcpServers',
    async (t) => {
      const e = await problemsOf(() =>
        loadTools(
          configWith([
            './fixtures/reserved-tool.mjs',
            './fixtures/clashing-tools.mjs',
            './fixtures/missing.mjs',
            '{mcp: {command: files-server, args: []}}',
          ]),
        ),
      );
      const reserved = path.join(fixtures, 'reserved-tool.mjs');
      const clashing = path.join(fixtures, 'clashing-tools.mjs');
      t.equal(e.problems.length, 3);
      t.strictSame(e.problems.slice(0, 2), [
        {
          file: configFile,
          path: `tools[0] (${reserved}: export sneaky)`,
          message: "Tool name _subagent_x must not start with the reserved prefix '_subagent_'.",
        },
        {
          file: configFile,
          path: `tools[1] (${clashing}: export second)`,
          message: 'duplicate tool name "lookup"',
        },
      ]);
      t.match(e.problems[2], {
        file: configFile,
        path: 'tools[2]',
        message: /^cannot load .*missing\.mjs: /,
      });
      t.match(e.message, `${configFile}: tools[0] (${reserved}: export sneaky): Tool name _subagent_x`);
    },
  );
});

// mcpCallResult: an MCP tools/call result as the tool's result or its failure.
t.test('mcpCallResult', async (t) => {
  t.test('structuredContent is the result when present, whatever the text says', async (t) => {
    t.strictSame(
      mcpCallResult({ content: [{ type: 'text', text: '{"sum": 3}' }], structuredContent: { sum: 3 } }),
      { sum: 3 },
    );
  });

  t.test(
    'without structuredContent the text contents are joined by newlines, other contents dropped',
    async (t) => {
      t.equal(
        mcpCallResult({
          content: [
            { type: 'text', text: 'one' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'file:///a.txt', text: 'two' } },
            { type: 'text', text: 'three' },
          ],
        }),
        'one\ntwo\nthree',
      );
      t.equal(mcpCallResult({ content: [] }), '', 'no content is an empty text');
    },
  );

  t.test('isError is a failed tool call with its text as the reason', async (t) => {
    t.throws(
      () =>
        mcpCallResult({
          content: [{ type: 'text', text: 'disk full' }],
          structuredContent: { x: 1 },
          isError: true,
        }),
      { code: 'tool_failed', message: 'disk full' },
    );
    t.throws(() => mcpCallResult({ content: [], isError: true }), {
      code: 'tool_failed',
      message: 'the MCP tool reported an error without a reason',
    });
  });
});
