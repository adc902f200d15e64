// The OpenAPI document as a user's tools meet it (issue 9): Redocly's recommended ruleset finds no
// error in the live /docs/json, with auth off and on, and the document says what a client needs:
// an operationId and a summary everywhere, typed bodies, named components, every error status.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { openapiMesh } from '../../../test/fixtures/openapi-client/openapi-mesh.js';
import { buildGateway } from '../src/index.js';
import { startGateway } from './support/gateway.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');
const redocly = path.join(root, 'node_modules/@redocly/cli/bin/cli.js');

type Operation = {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  parameters?: { in: string; name: string; schema: { type: string } }[];
  responses: Record<string, { description: string; content?: Record<string, { schema: any }> }>;
};
type Doc = { paths: Record<string, Record<string, Operation>>; components: any; servers: { url: string }[] };

// The OpenAPI tests' mesh without runners: the document needs none.
const mesh = await startGateway(t, { agentsYaml: openapiMesh.agentsYaml, tools: openapiMesh.tools ?? [] });
await mesh.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.app.server.address() as { port: number }).port}`;

// The same mesh behind a gateway with MESH_API_KEYS: one key for everything, one scoped to echo.
const secured = await buildGateway({
  config: mesh.config,
  redisUrl: mesh.redis.url,
  prefix: mesh.prefix,
  defaultTimeoutSeconds: 60,
  retentionSeconds: 3600,
  apiKeys: 'all-key,echo-key=echo',
});
t.teardown(() => secured.close());
await secured.app.listen({ port: 0, host: '127.0.0.1' });
const securedBase = `http://127.0.0.1:${(secured.app.server.address() as { port: number }).port}`;

const fetchDoc = async (url: string, key?: string): Promise<Doc> => {
  const res = await fetch(`${url}/docs/json`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return (await res.json()) as Doc;
};
const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([m, op]) => ({ at: `${m} ${p}`, op })),
  );

/** Lints the document with `redocly lint --extends recommended`; returns its problems by severity. */
async function lint(t: Test, doc: Doc): Promise<{ errors: string[]; warnings: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  // Exit status 1 means problems were found: the JSON report says which.
  const out = await run(
    process.execPath,
    [redocly, 'lint', '--extends', 'recommended', '--format', 'json', file],
    {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  const report = JSON.parse(out.stdout) as {
    problems: { severity: string; ruleId: string; message: string }[];
  };
  const line = (p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`;
  return {
    errors: report.problems.filter((p) => p.severity === 'error').map(line),
    warnings: report.problems.filter((p) => p.severity === 'warn').map(line),
  };
}

t.test("the live document passes Redocly's recommended ruleset with no error, auth off and on", async (t) => {
  for (const [what, doc] of [
    ['auth off', await fetchDoc(base)],
    ['auth on', await fetchDoc(securedBase, 'all-key')],
  ] as const) {
    const { errors, warnings } = await lint(t, doc);
    t.strictSame(errors, [], `${what}: no error`);
    // The one warning left: the project declares no license for info.license to name.
    t.strictSame(
      warnings,
      ['info-license: Info object should contain `license` field.'],
      `${what}: warnings`,
    );
    t.comment(`${what}: ${errors.length} errors, ${warnings.length} warnings (${warnings.join('; ')})`);
  }
});

t.test('every operation has an operationId, a summary, security and described responses', async (t) => {
  const doc = await fetchDoc(base);
  const ops = operations(doc);
  t.strictSame(ops.map((o) => o.at).sort(), [
    'delete /invocations/{id}',
    'delete /sessions/{id}',
    'get /a2a/{agent}/.well-known/agent-card.json',
    'get /agents',
    'get /agents/{name}',
    'get /approvals',
    'get /docs',
    'get /docs/json',
    'get /docs/yaml',
    'get /healthz',
    'get /invocations',
    'get /invocations/{id}',
    'get /invocations/{id}/calls/{callId}',
    'get /invocations/{id}/events',
    'get /metrics',
    'get /readyz',
    'get /sessions/{id}',
    'get /v1/models',
    'get /v1/models/{model}',
    'post /a2a/{agent}',
    'post /agents/echo/invoke',
    'post /agents/lead/invoke',
    'post /agents/quiz/invoke',
    'post /agents/slow/invoke',
    'post /invocations/{id}/approvals/{callId}',
    'post /invocations/{id}/fork',
    'post /mcp',
    'post /v1/chat/completions',
  ]);
  const ids = ops.map((o) => o.op.operationId);
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const { at, op } of ops) {
    t.ok(op.operationId && op.summary, `${at} has an operationId and a summary`);
    t.strictSame(op.security, [], `${at}: no security with auth off`);
    for (const [status, r] of Object.entries(op.responses)) {
      t.not(r.description, 'Default Response', `${at} ${status} is described`);
      // Past the gateway's own checks, /mcp's 406 is the MCP transport's JSON-RPC error. The
      // OpenAI-compatible routes answer in OpenAI's shape, but for what Node refuses before them.
      const openAi = at.includes(' /v1/') && !['408', '414', '431'].includes(status);
      const body = openAi ? 'OpenAIErrorBody' : 'ErrorBody';
      if (Number(status) >= 400 && !(at === 'post /mcp' && status === '406'))
        t.strictSame(
          r.content?.['application/json']?.schema,
          { $ref: `#/components/schemas/${body}` },
          `${at} ${status} is an ${body}`,
        );
    }
  }
  t.notOk(
    Object.keys(doc.components.schemas).some((n) => n.startsWith('def-')),
    'components are named',
  );
  t.strictSame(doc.servers, [{ url: base, description: 'This mesh, as this request reached it.' }]);
});

t.test('summaries and descriptions name no internal class of the code', async (t) => {
  const doc = await fetchDoc(base);
  const text = JSON.stringify(
    operations(doc).flatMap(({ op }) => [op.summary, (op as { description?: string }).description]),
  );
  // The shared package's classes and types are named Mesh…: MeshRedis, MeshError, MeshPlan.
  t.strictSame(text.match(/\bMesh[A-Z][A-Za-z]*/g) ?? [], [], 'no Mesh… identifier');
  t.equal(
    doc.paths['/readyz']!.get!.summary,
    'Readiness: Redis reachable, the tool catalogue published, and a live runner for every agent',
  );
});

t.test('success bodies are typed and every error a route answers is declared', async (t) => {
  const doc = await fetchDoc(base);
  const schemaOf = (p: string, m: string, s: string, type = 'application/json') =>
    doc.paths[p]?.[m]?.responses[s]?.content?.[type]?.schema;
  const view = { $ref: '#/components/schemas/InvocationView' };
  t.strictSame(schemaOf('/invocations/{id}', 'get', '200'), view);
  t.strictSame(schemaOf('/invocations/{id}', 'delete', '200'), view);
  t.strictSame(schemaOf('/invocations/{id}', 'delete', '202'), view);
  t.strictSame(schemaOf('/agents/{name}', 'get', '200'), { $ref: '#/components/schemas/AgentDescription' });
  t.strictSame(schemaOf('/agents', 'get', '200').properties.agents.items, {
    $ref: '#/components/schemas/AgentDescription',
  });
  t.strictSame(schemaOf('/invocations/{id}/events', 'get', '200', 'text/event-stream'), {
    $ref: '#/components/schemas/MeshEvent',
  });
  t.strictSame(schemaOf('/metrics', 'get', '200', 'text/plain'), { type: 'string' });
  const statuses = (p: string, m: string) => Object.keys(doc.paths[p]![m]!.responses);
  const transport = ['408', '414', '431'];
  t.strictSame(statuses('/agents/{name}', 'get').sort(), ['200', '404', '503', ...transport].sort());
  t.strictSame(statuses('/invocations/{id}', 'get').sort(), ['200', '404', '503', ...transport].sort());
  t.strictSame(
    statuses('/invocations/{id}/events', 'get').sort(),
    ['200', '400', '404', '429', '503', ...transport].sort(),
  );
  t.strictSame(
    statuses('/agents/quiz/invoke', 'post').sort(),
    ['200', '202', '400', '404', '409', '413', '415', '422', '429', '503', ...transport].sort(),
  );
  t.strictSame(
    schemaOf('/agents/quiz/invoke', 'post', '200', 'text/event-stream'),
    { $ref: '#/components/schemas/MeshEvent' },
    'invoke?stream=true answers a text/event-stream of MeshEvents',
  );
  t.strictSame(schemaOf('/invocations/{id}/fork', 'post', '200'), view);
  t.strictSame(schemaOf('/invocations/{id}/fork', 'post', '202'), view);
  t.strictSame(
    statuses('/invocations/{id}/fork', 'post').sort(),
    ['200', '202', '400', '404', '409', '413', '415', '422', '503', ...transport].sort(),
  );
});

t.test('wait, timeout and limit are typed numbers; Idempotency-Key is a header parameter', async (t) => {
  const doc = await fetchDoc(base);
  const params = (p: string, m: string) =>
    Object.fromEntries((doc.paths[p]![m]!.parameters ?? []).map((x) => [`${x.in}:${x.name}`, x.schema]));
  const invoke = params('/agents/echo/invoke', 'post');
  t.strictSame(invoke['query:wait'], { type: 'number', minimum: 0, maximum: 300, default: 30 });
  t.strictSame(invoke['query:timeout'], { type: 'integer', minimum: 1, maximum: 86400, default: 60 });
  t.match(invoke['header:Idempotency-Key'], { type: 'string', maxLength: 255 });
  t.strictSame(invoke['query:stream'], { type: 'boolean' }, 'stream is a typed boolean');
  t.strictSame(params('/invocations/{id}/events', 'get')['query:deltas'], { type: 'boolean' });
  t.strictSame(params('/invocations', 'get')['query:limit'], {
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: 20,
  });
  t.ok(
    params('/invocations/{id}/events', 'get')['header:Last-Event-ID'],
    'Last-Event-ID is a header parameter',
  );
});

t.test('with auth on, operations declare the bearer scheme and 401; open routes declare none', async (t) => {
  const doc = await fetchDoc(securedBase, 'all-key');
  const open = [
    'get /healthz',
    'get /readyz',
    'get /metrics',
    'get /docs',
    'get /a2a/{agent}/.well-known/agent-card.json',
  ];
  for (const { at, op } of operations(doc)) {
    if (open.includes(at)) {
      t.strictSame(op.security, [], `${at} is open`);
      t.notOk(op.responses['401'], `${at} never answers 401`);
    } else {
      t.strictSame(op.security, [{ bearerAuth: [] }], `${at} demands a key`);
      t.ok(op.responses['401'], `${at} declares 401`);
    }
  }
  t.ok(doc.paths['/agents/{name}']!.get!.responses['403'], 'a scoped key may be refused an agent');
  const scoped = await fetchDoc(securedBase, 'echo-key');
  t.strictSame(
    Object.keys(scoped.paths).filter((p) => p.endsWith('/invoke')),
    ['/agents/echo/invoke'],
    'a scoped key is shown only its agents',
  );
});

t.test('the Swagger UI shows the mesh by its name', async (t) => {
  const page = await (await fetch(`${base}/docs`)).text();
  t.match(page, /<title>agentmesh API<\/title>/);
  const init = await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text();
  const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init)?.[1];
  t.match(Buffer.from(logo ?? '', 'base64').toString(), />agentmesh<\/text>/, 'the top bar logo is its name');
});
