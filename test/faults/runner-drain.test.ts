// SIGTERM drains a runner: it takes no new jobs and finishes the ones in hand; past
// RUNNER_DRAIN_MS it hands them back to the queue, where another runner resumes them.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { waitUntil } from '../support/wait-until.js';

const agents = `
  solo: {instructions: "@agent solo"}
`;
const slow = () => ({ final: 'slow answer', latencyMs: 1500 });

t.test('a runner given SIGTERM finishes the invocation in hand before it exits', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: agents, script: slow });
  const runner = startService(t, 'runner', { ...mesh.env, RUNNER_DRAIN_MS: '20000' });
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => runner.output(),
  );
  const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => mesh.model.requests.length === 1,
    20_000,
    () => 'the model call',
  );
  process.kill(-runner.proc.pid!, 'SIGTERM');
  const code = await runner.exited;
  t.equal(code, 0, 'the runner exits cleanly');
  const view = (await mesh.get(`/invocations/${started.json.id}`)).json;
  t.equal(view.status, 'succeeded', 'the invocation in hand finished first');
  t.equal(mesh.model.requests.length, 1);
  t.equal(await mesh.client.zcard(keyLayout(mesh.prefix).agentRunners('solo')), 0, 'it left the runner set');
});

t.test('past the drain timeout a runner hands its job back and another runner finishes it', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: agents, script: slow });
  const first = startService(t, 'runner', { ...mesh.env, RUNNER_DRAIN_MS: '100' });
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => first.output(),
  );
  const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => mesh.model.requests.length === 1,
    20_000,
    () => 'the model call',
  );
  process.kill(-first.proc.pid!, 'SIGTERM');
  t.equal(await first.exited, 0);
  t.equal(
    (await mesh.get(`/invocations/${started.json.id}`)).json.status,
    'queued',
    'handed back, not failed',
  );
  const second = startService(t, 'runner', mesh.env);
  const done = await mesh.waitForStatus(started.json.id, 'succeeded', 60_000, () => second.output());
  t.equal(done.output, 'slow answer');
  t.same(mesh.model.requests.map(turnOf), [0, 0], 'the call cut short by the hand-back was issued again');
  t.same(
    done.calls.map((c: any) => c.status),
    ['succeeded'],
    'one model call record, now succeeded',
  );
});
