// GET /agents, /agents/{name}, /docs, /docs/json, /healthz and /metrics
// (docs/reference/rest-api.md): each agent's schemas and callables, and an OpenAPI operation per
// agent; on a gateway without runners (test/gateway-invocations.test.ts checks the model receives
// exactly these callables).

import {
  PLANNER_AGENTS_YAML,
  pathInput,
  planner,
  promptInput,
  searchInput,
} from '@agentmesh/test-support/planner-agents';
import t from 'tap';
import { startGateway } from './support/gateway.js';

const answerOutput = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

const mesh = await startGateway(t, {
  tools: [
    { name: 'read_file', description: 'Reads a file.', input: pathInput },
    { name: 'search', description: 'Searches the web.', input: searchInput },
  ],
  agentsYaml: PLANNER_AGENTS_YAML,
});

t.test('GET /agents/{name} describes one agent with its callables', async (t) => {
  const res = await mesh.get('/agents/planner');
  t.equal(res.status, 200);
  t.strictSame(res.json, planner);
});

t.test('GET /agents lists every agent with its schemas, tools, sub-agents and callables', async (t) => {
  const res = await mesh.get('/agents');
  t.equal(res.status, 200);
  const agents = res.json.agents as { name: string }[];
  t.strictSame(agents.map((a) => a.name).sort(), ['helper', 'planner', 'reader']);
  t.strictSame(
    agents.find((a) => a.name === 'planner'),
    planner,
  );
  t.strictSame(
    agents.find((a) => a.name === 'reader'),
    {
      name: 'reader',
      description: 'Reads one file and answers.',
      input: pathInput,
      output: answerOutput,
      tools: ['read_file'],
      subagents: [],
      callables: [{ name: 'read_file', description: 'Reads a file.', parameters: pathInput }],
    },
  );
});

t.test('GET /docs answers the Swagger UI page', async (t) => {
  const res = await mesh.app.inject({ method: 'GET', url: '/docs' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/html/);
  t.match(res.body, /<html/i);
  t.match(res.body, /swagger-ui/);
});

t.test(
  'GET /docs/json has an invoke operation per agent with its real input and output schema',
  async (t) => {
    const res = await mesh.get('/docs/json');
    t.equal(res.status, 200);
    const doc = res.json;
    t.match(doc.openapi, /^3\./);
    for (const name of ['planner', 'reader', 'helper']) {
      t.equal(doc.paths[`/agents/${name}/invoke`]?.post?.operationId, `invoke_${name}`, name);
    }
    t.notOk(doc.paths['/agents/{name}/invoke'], 'the catch-all for unknown agents is not documented');
    const reader = doc.paths['/agents/reader/invoke'].post;
    t.strictSame(reader.requestBody.content['application/json'].schema, pathInput);
    t.equal(reader.requestBody.required, true);
    for (const status of ['200', '202']) {
      const view = reader.responses[status].content['application/json'].schema;
      t.strictSame(
        view.properties.output,
        answerOutput,
        `the ${status} view's output is reader's output schema`,
      );
      t.ok(view.properties.calls, 'the view lists calls');
    }
    const planner = doc.paths['/agents/planner/invoke'].post;
    t.strictSame(planner.requestBody.content['application/json'].schema, promptInput);
    t.strictSame(planner.responses['200'].content['application/json'].schema.properties.output, {
      description: 'The final answer text.',
      type: 'string',
    });
    t.match(planner.description, 'Plans the work.');
    t.strictSame(planner.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`).sort(), [
      'header:Idempotency-Key',
      'query:budget',
      'query:multitask',
      'query:session',
      'query:stream',
      'query:timeout',
      'query:wait',
    ]);
    t.ok(doc.paths['/invocations/{id}']?.get, 'GET /invocations/{id} is documented');
    t.ok(doc.paths['/agents']?.get, 'GET /agents is documented');
  },
);

t.test('GET /healthz answers 200', async (t) => {
  const res = await mesh.get('/healthz');
  t.equal(res.status, 200);
  t.strictSame(res.json, { status: 'ok' });
});

t.test('GET /metrics answers Prometheus text', async (t) => {
  const res = await mesh.app.inject({ method: 'GET', url: '/metrics' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  t.match(res.body, /^# HELP \w+ .+$/m);
  t.match(res.body, /^# TYPE process_cpu_seconds_total counter$/m);
  t.match(res.body, /^process_cpu_seconds_total \d/m);
});
