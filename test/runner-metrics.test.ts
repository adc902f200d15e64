// A runner's Prometheus metrics, on RUNNER_METRICS_PORT: delegations are counted and timed by the
// registered sub-agent name (never the `_subagent_` callable name), beside model and tool calls.
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

t.test('delegations are counted and timed by the registered sub-agent name', async (t) => {
  const mesh = await startMesh(t, {
    runners: 0,
    tools: [
      { name: 'clock', description: 'Time.', input: { type: 'object', properties: {} }, run: () => 'noon' },
    ],
    agentsYaml: `
  boss: {instructions: "@agent boss", tools: [clock], subagents: [helper]}
  helper: {instructions: "@agent helper"}
`,
    script: (r) =>
      r.agent === 'helper'
        ? { final: 'helped' }
        : turnOf(r) === 0
          ? {
              calls: [
                { name: '_subagent_helper', args: { prompt: 'a' } },
                { name: '_subagent_helper', args: { prompt: 42 } },
                { name: 'clock', args: {} },
              ],
            }
          : { final: JSON.stringify(toolMessagesOf(r)) },
  });
  const port = await freePort();
  const runner = startService(t, 'runner', { ...mesh.env, RUNNER_METRICS_PORT: String(port) });
  const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => runner.output(),
  );
  const res = await mesh.invoke('boss', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  const text = await metrics();
  t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="started"\} 2/);
  t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="succeeded"\} 1/);
  t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="failed"\} 1/);
  t.match(text, /mesh_delegation_seconds_count\{agent="boss",subagent="helper"\} 2/);
  t.notMatch(text, /_subagent_/, 'no metric carries the callable prefix');
  t.match(text, /mesh_model_calls_total\{agent="boss",outcome="succeeded"\} 2/);
  t.match(text, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 1/);
  t.match(text, /mesh_invocations_total\{agent="helper",status="failed"\} 1/);
  t.match(text, /mesh_runner_slots_in_use 0/);
});
