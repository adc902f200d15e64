// A runner's metric labels stay bounded under a hostile model (docs/reference/bounds.md): tool and sub-agent
// names the agent does not declare are counted as `unknown`, never under the invented name.
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

t.test('invented tool and sub-agent names add no label value to a runner’s metrics', async (t) => {
  const invented = Array.from({ length: 6 }, () => `x${Math.random().toString(36).slice(2, 12)}`);
  const mesh = await startMesh(t, {
    tools: [{ name: 'clock', description: 'Time.', input: { type: 'object' }, run: () => 'noon' }],
    agentsYaml: `
  boss: {instructions: "@agent boss", tools: [clock], subagents: [helper]}
  helper: {instructions: "@agent helper"}
`,
    script: (r) =>
      r.agent === 'helper' || turnOf(r) > 0
        ? { final: 'done' }
        : {
            calls: [
              ...invented.slice(0, 3).map((name) => ({ name, args: {} })),
              ...invented.slice(3).map((name) => ({ name: `_subagent_${name}`, args: { prompt: 'p' } })),
              { name: 'clock', args: {} },
            ],
          },
  });
  const res = await mesh.invoke('boss', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  const text = await mesh.runners[0]!.metrics.registry.metrics();
  for (const name of invented) t.notOk(text.includes(name), `no label carries ${name}`);
  t.match(text, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 1/);
  t.match(text, /mesh_tool_calls_total\{agent="boss",tool="unknown",outcome="failed"\} 3/);
  const labels = new Set([...text.matchAll(/(?:tool|subagent)="([^"]*)"/g)].map((m) => m[1]));
  for (const label of labels) t.ok(label === 'clock' || label === 'unknown', `label ${label} is declared`);
});
