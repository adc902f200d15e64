// An invocation whose runners keep dying is counted, and past MESH_MAX_RECOVERIES it fails with
// too_many_recoveries instead of crashing runner after runner forever.
import t from 'tap';
import { startMesh, startService } from '../support/mesh.js';
import { runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

t.test('an invocation recovered more often than allowed fails with too_many_recoveries', async (t) => {
  const mesh = await startMesh(t, {
    runners: 0,
    agentsYaml: `
  solo: {instructions: "@agent solo"}
`,
    script: () => ({ final: 'never', latencyMs: 60_000 }),
  });
  const env = { ...mesh.env, MESH_MAX_RECOVERIES: '1' };
  startService(t, 'runner', env);
  const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
  const id = started.json.id as string;
  for (let crash = 1; crash <= 2; crash++) {
    await waitUntil(
      async () => mesh.model.requests.length === crash,
      30_000,
      () => `model call ${crash}`,
    );
    const call = (await mesh.get(`/invocations/${id}`)).json.calls.find((c: any) => c.status === 'started');
    process.kill(runnerPid(call.runner), 'SIGKILL');
    startService(t, 'runner', env);
  }
  const view = await mesh.waitForStatus(id, 'failed', 60_000);
  t.equal(view.error.code, 'too_many_recoveries');
  t.equal(mesh.model.requests.length, 2, 'the first recovery re-issued the call; the second gave up');
});
