// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` env references are what these tests are about
import t from 'tap';
import { parseConfig, redactConfig } from '../src/config/index.js';

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
  t.strictSame(redacted.tools, [{ mcp: { command: 'github-mcp', args: [], env: { GITHUB_TOKEN: '***' } } }]);
  t.equal(redacted.models.default?.model, 'demo');
  t.equal(redacted.agents, config.agents);
  t.notMatch(JSON.stringify(redacted), /secret/);
});

t.test('redacting leaves the original config untouched', async (t) => {
  redactConfig(config);
  t.equal(config.models.default?.apiKey, 'sk-secret');
  t.ok(Object.isFrozen(redactConfig(config).models.default));
});
