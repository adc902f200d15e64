// A runner's Prometheus metrics, on RUNNER_METRICS_PORT: delegations are counted and timed by the
// registered sub-agent name (never the `_subagent_` callable name), beside model and tool calls, and
// every invocation's end is counted and timed by agent and terminal status (docs/reference/metrics.md).
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

t.test(
  'delegations are counted and timed by sub-agent name, invocation ends by agent and status',
  async (t) => {
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
    // The runner counts the root's end just after storing it, where the gateway may see it first.
    const text = await waitUntil(
      async () => {
        const now = await metrics();
        return now.includes('mesh_invocations_total{agent="boss",status="succeeded"} 1') ? now : undefined;
      },
      20_000,
      () => 'the root invocation counted',
    );
    t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="started"\} 2/);
    t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="succeeded"\} 1/);
    t.match(text, /mesh_delegations_total\{agent="boss",subagent="helper",outcome="failed"\} 1/);
    t.match(text, /mesh_delegation_seconds_count\{agent="boss",subagent="helper"\} 2/);
    t.notMatch(text, /_subagent_/, 'no metric carries the callable prefix');
    t.match(text, /mesh_model_calls_total\{agent="boss",outcome="succeeded"\} 2/);
    // The fake model counts 11 prompt and 7 completion tokens per reply: the boss's two, the helper's one.
    t.match(text, /mesh_tokens_total\{agent="boss",kind="prompt"\} 22\n/);
    t.match(text, /mesh_tokens_total\{agent="boss",kind="completion"\} 14\n/);
    t.match(text, /mesh_tokens_total\{agent="helper",kind="prompt"\} 11\n/);
    t.match(text, /mesh_tokens_total\{agent="helper",kind="completion"\} 7\n/);
    t.match(text, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 1/);
    t.match(text, /mesh_invocations_total\{agent="helper",status="failed"\} 1/);
    // Each end is timed where it is counted: the root, the child that answered, the one that failed.
    for (const [agent, status] of [
      ['boss', 'succeeded'],
      ['helper', 'succeeded'],
      ['helper', 'failed'],
    ]) {
      t.match(text, new RegExp(`mesh_invocation_seconds_count\\{agent="${agent}",status="${status}"\\} 1\n`));
      t.match(
        text,
        new RegExp(`mesh_invocation_seconds_bucket\\{le="\\+Inf",agent="${agent}",status="${status}"\\} 1\n`),
      );
    }
    t.notMatch(
      text,
      /mesh_invocation_seconds_count\{agent="boss",status="failed"\}/,
      'no end that did not happen',
    );
    t.match(text, /mesh_runner_slots_in_use 0/);
  },
);
