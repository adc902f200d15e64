// GET /agents, /agents/{name}, /docs, /docs/json, /healthz and /metrics
// (docs/reference/rest-api.md), where runners are needed: the model receives exactly the callables
// GET /agents/{name} shows, and /readyz answers 200 (the rest is
// services/gateway/test/agents.test.ts).
import t from 'tap';
import { startMesh } from './support/mesh.js';
import { PLANNER_AGENTS_YAML, pathInput, planner, searchInput } from './support/planner-agents.js';

const mesh = await startMesh(t, {
  tools: [
    { name: 'read_file', description: 'Reads a file.', input: pathInput, run: () => 'text' },
    { name: 'search', description: 'Searches the web.', input: searchInput, run: () => [] },
  ],
  agentsYaml: PLANNER_AGENTS_YAML,
});

t.test('GET /agents/{name} describes one agent with exactly the callables its model receives', async (t) => {
  const res = await mesh.get('/agents/planner');
  t.equal(res.status, 200);
  t.strictSame(res.json, planner);
  const invoked = await mesh.invoke('planner', { prompt: 'plan' });
  t.equal(invoked.status, 200);
  const seen = mesh.model.of('planner')[0]!.tools;
  t.strictSame(
    seen.map((x) => ({ type: x.type, ...x.function })),
    planner.callables.map((c) => ({ type: 'function', ...c })),
    'the model received the same list, in the same order',
  );
});

t.test('GET /readyz answers 200 when the catalogue and a runner per agent are there', async (t) => {
  const res = await mesh.get('/readyz');
  t.equal(res.status, 200);
  t.strictSame(res.json, { status: 'ready' });
});
