// GET /agents, /agents/{name}, /docs, /docs/json, /healthz and /metrics
// (docs/reference/rest-api.md), where runners are needed: the model receives exactly the callables
// GET /agents/{name} shows, and /readyz answers 200 (the rest is
// services/gateway/test/agents.test.ts).
import t from 'tap';
import { startMesh } from './support/mesh.js';

const pathInput = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const promptInput = {
  type: 'object',
  properties: { prompt: { type: 'string' } },
  required: ['prompt'],
  additionalProperties: false,
};
const searchInput = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

const mesh = await startMesh(t, {
  tools: [
    { name: 'read_file', description: 'Reads a file.', input: pathInput, run: () => 'text' },
    { name: 'search', description: 'Searches the web.', input: searchInput, run: () => [] },
  ],
  agentsYaml: `
  planner:
    description: Plans the work.
    instructions: "@agent planner"
    tools: [search, read_file]
    subagents: [reader, helper]
  reader:
    description: Reads one file and answers.
    instructions: "@agent reader"
    tools: [read_file]
    input: {type: object, properties: {path: {type: string}}, required: [path]}
    output: {type: object, properties: {answer: {type: string}}, required: [answer]}
  helper:
    description: "   "
    instructions: "@agent helper"
`,
});

const planner = {
  name: 'planner',
  description: 'Plans the work.',
  input: promptInput,
  output: null,
  tools: ['search', 'read_file'],
  subagents: ['reader', 'helper'],
  callables: [
    { name: 'search', description: 'Searches the web.', parameters: searchInput },
    { name: 'read_file', description: 'Reads a file.', parameters: pathInput },
    {
      name: '_subagent_reader',
      description: 'Reads one file and answers. This is subagent.',
      parameters: pathInput,
    },
    {
      name: '_subagent_helper',
      description: 'Delegate a standalone task to sub-agent helper This is subagent.',
      parameters: promptInput,
    },
  ],
};

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
