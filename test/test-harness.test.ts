// The test harness's own processes: a tool-host started as a process (startMesh with a tools
// module) comes up even when its port is taken first, and one that cannot start fails the test at
// once with its reason.
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { startMesh } from './support/mesh.js';
import { freePort } from './support/redis-server.js';

const toolsModule = path.resolve(import.meta.dirname, 'faults/fixtures/side-effect-tools.mjs');
const agentsYaml = `
  agent: {instructions: "@agent agent", tools: [reindex]}
`;

t.test(
  'a tool-host process whose port was taken before it listened is started again on another',
  async (t) => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const picks = [(taken.address() as net.AddressInfo).port, await freePort()];
    const picked: number[] = [];
    const mesh = await startMesh(t, {
      toolsModule,
      agentsYaml,
      toolHostPort: async () => {
        const port = picks.shift() ?? (await freePort());
        picked.push(port);
        return port;
      },
    });
    t.equal(picked.length, 2, 'a second port after the first was taken');
    t.equal(mesh.toolHostUrl, `http://127.0.0.1:${picked[1]}`);
    t.notMatch(mesh.toolHostProcess!.output(), /EADDRINUSE/, 'the process serving is the second');
    t.equal((await fetch(`${mesh.toolHostUrl}/healthz`)).ok, true, 'it answers');
  },
);

t.test('a tool-host process that cannot start fails the test at once, with its reason', async (t) => {
  await t.rejects(
    startMesh(t, {
      toolsModule,
      agentsYaml,
      toolHostEnv: { MESH_CONFIG: path.join(import.meta.dirname, 'no-such-config.yaml') },
    }),
    {
      message:
        /^the tool-host exited before it published its catalogue; its output:\n[\s\S]*no-such-config\.yaml/,
    },
  );
});
