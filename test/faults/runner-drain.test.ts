// SIGTERM drains a runner: it takes no new jobs and finishes the ones it holds; past
// RUNNER_DRAIN_MS it requeues them, where another runner resumes them.
import { keyLayout } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { scriptProcess } from '../support/process-group.js';
import { waitUntil } from '../support/wait-until.js';

const agents = `
  solo: {instructions: "@agent solo"}
`;
const slow = () => ({ final: 'slow answer', latencyMs: 1500 });

/** A mesh whose one runner, a process of its own, is in the model call of a slow invocation. */
async function runnerHolding(t: Test, drainMs: string) {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: agents, script: slow });
  const runner = startService(t, 'runner', { ...mesh.env, RUNNER_DRAIN_MS: drainMs });
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
  return { mesh, runner, started };
}

t.test('a runner given SIGTERM finishes the invocation it holds before it exits', async (t) => {
  const { mesh, runner, started } = await runnerHolding(t, '20000');
  process.kill(-runner.proc.pid!, 'SIGTERM');
  const code = await runner.exited;
  t.equal(code, 0, 'the runner exits cleanly');
  const view = (await mesh.get(`/invocations/${started.json.id}`)).json;
  t.equal(view.status, 'succeeded', 'the invocation it held finished first');
  t.equal(mesh.model.requests.length, 1);
  t.equal(await mesh.client.zcard(keyLayout(mesh.prefix).agentRunners('solo')), 0, 'it left the runner set');
});

t.test('past the drain timeout a runner requeues its job and another runner finishes it', async (t) => {
  const { mesh, runner: first, started } = await runnerHolding(t, '100');
  process.kill(-first.proc.pid!, 'SIGTERM');
  t.equal(await first.exited, 0);
  t.equal((await mesh.get(`/invocations/${started.json.id}`)).json.status, 'queued', 'requeued, not failed');
  const second = startService(t, 'runner', mesh.env);
  const done = await mesh.waitForStatus(started.json.id, 'succeeded', 60_000, () => second.output());
  t.equal(done.output, 'slow answer');
  t.same(mesh.model.requests.map(turnOf), [0, 0], 'the call cut short by the requeue was issued again');
  t.same(
    done.calls.map((c: any) => c.status),
    ['succeeded'],
    'one model call record, now succeeded',
  );
});

// A launcher that relays signals (tsx's CLI) gives its child 60 ms to acknowledge a SIGTERM and
// then SIGKILLs it: a runner busy at that moment (a long model reply to parse, a loaded machine)
// lost its jobs to the stall detector instead of draining. The runner is paused when the SIGTERM
// arrives, as a stand-in for a blocked event loop; resumed, it must still drain.
t.test('a runner that cannot answer at once when SIGTERM arrives still drains', async (t) => {
  const { mesh, runner, started } = await runnerHolding(t, '20000');
  const main = scriptProcess(runner.proc.pid!, 'agent-runner/src/main.');
  t.ok(main, 'the process that runs the runner');
  process.kill(main!, 'SIGSTOP');
  process.kill(-runner.proc.pid!, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  try {
    process.kill(main!, 'SIGCONT');
  } catch {
    // killed while paused: the exit code below says so
  }
  t.equal(await runner.exited, 0, 'the runner exits cleanly');
  const view = (await mesh.get(`/invocations/${started.json.id}`)).json;
  t.equal(view.status, 'succeeded', 'the invocation it held finished first');
  t.equal(mesh.model.requests.length, 1, 'no call was re-issued');
});
