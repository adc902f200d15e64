// `npm run gateway` with a bad config (docs/reference/configuration.md): it stops at start with the file, the path inside
// it and the reason for every problem at once, never a bare stack trace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';

t.test('a config naming an unknown sub-agent and an unknown model stops the gateway', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-gateway-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(
    file,
    `models:
  default: {provider: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: k, model: fake}
tools: []
agents:
  planner:
    description: Plans.
    instructions: You plan.
    subagents: [researcher, ghost]
  researcher:
    description: Researches.
    instructions: You research.
    model: gpt9
`,
  );
  const gateway = startService(t, 'gateway', {
    MESH_CONFIG: file,
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    GATEWAY_PORT: '0',
  });
  const code = await gateway.exited;
  t.not(code, null, 'the gateway exits by itself');
  t.not(code, 0, 'with a failure code');
  const output = gateway.output();
  t.match(output, 'Invalid mesh config (2 problems):');
  t.match(
    output,
    `${file}: agents.planner.subagents[1]: unknown agent "ghost" (agents: planner, researcher)`,
  );
  t.match(output, `${file}: agents.researcher.model: unknown model "gpt9" (models: default)`);
  t.notMatch(output, /^\s+at /m, 'no stack trace');
});
