// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
import t from 'tap';
import { parseConfig, redactConfig } from '../src/config/index.js';
import { FILE, parse } from './fixtures/config/mesh-yaml.js';
import { problemsOf } from './fixtures/config/problems-of.js';

const withTools = (...entries: string[]) =>
  ['models: {}', 'tools:', ...entries.map((e) => `  - ${e}`), 'agents: {}'].join('\n');

t.test('stdio and Streamable HTTP MCP entries load with their prefix, idempotent and timeout', async (t) => {
  const config = parse(
    withTools(
      '{mcp: {command: files-mcp}, prefix: fs_, idempotent: true}',
      '{mcp: {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer x"}}, timeoutMs: 5000}',
    ),
  );
  t.strictSame(config.tools, [
    { mcp: { command: 'files-mcp', args: [] }, prefix: 'fs_', idempotent: true },
    { mcp: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } }, timeoutMs: 5000 },
  ]);
});

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
      { file: FILE, path: 'tools[3].mcp.headers', message: 'headers go with url (a Streamable HTTP server)' },
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
