// A runner whose definition of an agent differs from the one an invocation was created with fails
// it with plan_changed instead of replaying records against other code.
import fs from 'node:fs';
import t from 'tap';
import { startMesh, startService } from './support/mesh.js';

t.test(
  'a runner with a different definition of the agent fails the invocation with plan_changed',
  async (t) => {
    const mesh = await startMesh(t, { runners: 0, agentsYaml: '  solo: {instructions: "@agent solo v1"}\n' });
    const changed = mesh.configFile.replace(/mesh\.yaml$/, 'mesh-v2.yaml');
    fs.writeFileSync(
      changed,
      fs.readFileSync(mesh.configFile, 'utf8').replace('@agent solo v1', '@agent solo v2'),
    );
    startService(t, 'runner', { ...mesh.env, MESH_CONFIG: changed });
    const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
    const view = await mesh.waitForStatus(started.json.id, 'failed', 60_000);
    t.equal(view.error.code, 'plan_changed');
    t.match(view.error.message, /definition of agent solo changed/);
    t.equal(mesh.model.requests.length, 0, 'nothing was replayed or called');
  },
);
