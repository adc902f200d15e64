// `npm run tool-host` refuses to start on a bad tools module, naming the file and the path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startService } from '../../../test/support/mesh.js';
import { freePort } from '../../../test/support/redis-server.js';

t.test('a tools module exporting a _subagent_ tool stops the tool-host with the file and path', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-tool-host-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const module = path.join(import.meta.dirname, 'fixtures', 'reserved-tool.mjs');
  const config = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(config, `models: {}\ntools: ['${module}']\nagents: {}\n`);
  const svc = startService(t, 'tool-host', {
    MESH_CONFIG: config,
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    TOOL_HOST_PORT: '0',
  });
  const code = await svc.exited;
  t.not(code, 0, 'the process exits with a failure code');
  t.not(code, null, 'the process exits by itself');
  const output = svc.output();
  t.match(
    output,
    `${config}: tools[0] (${module}: export sneaky): Tool name _subagent_x must not start with the reserved prefix '_subagent_'.`,
  );
  t.notMatch(output, /^\s+at /m, 'no stack trace');
});
