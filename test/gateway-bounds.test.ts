// docs/reference/bounds.md at the gateway's invoke, where a run is needed: the largest ?timeout
// runs, a JSON string body reaches a code agent without input schema, brackets inside strings are
// no nesting. What the gateway refuses or stores before a run is
// services/gateway/test/bounds.test.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startMesh } from './support/mesh.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bounds-'));
const codeAgent = path.join(dir, 'any-input.mjs');
fs.writeFileSync(codeAgent, "export default { run: async (input) => 'got ' + typeof input };\n");

const mesh = await startMesh(t, {
  agentsYaml: `
  chat: {description: Chats., instructions: "@agent chat"}
  coder: {module: '${codeAgent}'}
`,
  script: () => ({ final: 'ok' }),
});

t.test('the largest timeout runs, with its deadline', async (t) => {
  const max = await mesh.invoke('chat', { prompt: 'hi' }, 'wait=30&timeout=86400');
  t.equal(max.status, 200, 'the maximum itself is accepted');
  t.equal(Date.parse(max.json.deadline) - Date.parse(max.json.createdAt), 86_400_000);
});

t.test('a JSON string body reaches a code agent without input schema', async (t) => {
  const ok = await mesh.gateway.app.inject({
    method: 'POST',
    url: '/agents/coder/invoke?wait=30',
    headers: { 'content-type': 'application/json' },
    payload: '"text"',
  });
  t.equal(ok.json().output, 'got string', 'a JSON body still reaches the code agent');
});

t.test('brackets inside strings are no nesting', async (t) => {
  const strings = `{"prompt":"${'['.repeat(5000)}"}`;
  const res = await mesh.invoke('chat', JSON.parse(strings), 'wait=30');
  t.equal(res.status, 200, 'brackets inside strings are no nesting');
  t.equal(res.json.output, 'ok');
});
