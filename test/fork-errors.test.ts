// Every refusal of POST /invocations/{id}/fork (docs/guides/durability.md, docs/reference/bounds.md), with API keys on: each with its
// code and status, before anything is written.
import fs from 'node:fs';
import { keyLayout, parseConfig } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { listenGateway, startMesh } from './support/mesh.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const mesh = await startMesh(t, {
  apiKeys: 'k-all,k-other,k-scoped=lead',
  headers: bearer('k-all'),
  agentsYaml: `
  lead: {instructions: "@agent lead", tools: [note], subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
  guard: {instructions: "@agent guard", tools: [note], approvals: [note]}
`,
  script: (r) => {
    if (r.agent === 'helper') return { final: 'helped' };
    if (turnOf(r) > 0) return { final: 'done' };
    return {
      calls: [
        { name: 'note', args: {} },
        ...(r.agent === 'lead' ? [{ name: '_subagent_helper', args: { prompt: 'h' } }] : []),
        { name: 'note', args: {} },
      ],
    };
  },
  tools: [{ name: 'note', description: 'Notes.', input: { type: 'object' }, run: async () => 'noted' }],
});

const fork = (id: string, payload: unknown, key = 'k-all', query = 'wait=30') =>
  mesh.request('POST', `/invocations/${id}/fork?${query}`, { payload, headers: bearer(key) });
const error = (res: { status: number; json: { error?: { code: string } } }) => [
  res.status,
  res.json.error?.code,
];

const lead = (await mesh.invoke('lead', { prompt: 'go' })).json;
t.equal(lead.status, 'succeeded');

t.test('an unknown, malformed or invisible invocation is not found', async (t) => {
  t.same(error(await fork('inv_00000000000000000000000000000000', { fromCallId: 't0-model' })), [
    404,
    'invocation_not_found',
  ]);
  t.same(error(await fork('nope', { fromCallId: 't0-model' })), [404, 'invocation_not_found']);
  t.same(
    error(await fork(lead.id, { fromCallId: 't0-model' }, 'k-other')),
    [404, 'invocation_not_found'],
    "another key's",
  );
  const unauthenticated = await mesh.request('POST', `/invocations/${lead.id}/fork`, {
    payload: { fromCallId: 't0-model' },
    headers: {},
  });
  t.same(error(unauthenticated), [401, 'unauthorized']);
});

t.test("a node whose agent is outside the key's scope is forbidden", async (t) => {
  const own = await mesh.invoke('lead', { prompt: 'go' }, 'wait=30', bearer('k-scoped'));
  const child = own.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
  t.same(error(await fork(child, { fromCallId: 't0-model' }, 'k-scoped')), [403, 'forbidden']);
  t.equal(
    (await fork(own.json.id, { fromCallId: 't1-model' }, 'k-scoped')).status,
    200,
    'its own root it may fork',
  );
  t.equal(
    (await fork(child, { fromCallId: 't0-model' }, 'k-all')).status,
    404,
    'and no other key sees the child',
  );
});

t.test('a call the invocation does not have is not found', async (t) => {
  const res = await fork(lead.id, { fromCallId: 't7-model' });
  t.same(error(res), [404, 'call_not_found']);
  t.match(res.json.error.message, /no call with call id t7-model/);
});

t.test('a call without a final recorded outcome, at or before the point, cannot be reused', async (t) => {
  const waiting = (await mesh.invoke('guard', { prompt: 'go' }, 'wait=0')).json.id;
  const view = await mesh.waitForStatus(waiting, 'waiting');
  t.same(
    view.calls.map((c: { callId: string; status: string }) => [c.callId, c.status]),
    [
      ['t0-model', 'succeeded'],
      ['t0-call0', 'awaiting_approval'],
      ['t0-call1', 'awaiting_approval'],
    ],
  );
  const at = await fork(waiting, { fromCallId: 't0-call0' });
  t.same(error(at), [409, 'call_not_recorded']);
  t.match(at.json.error.message, /t0-call0 \(tool note\) is awaiting_approval/);
  const after = await fork(waiting, { fromCallId: 't0-call1', result: 'x' });
  t.same(error(after), [409, 'call_not_recorded'], 'a call before the point');
  const given = await fork(
    waiting,
    { fromCallId: 't0-call0', result: 'approved by hand' },
    'k-all',
    'wait=0',
  );
  t.equal(given.status, 202, 'a running node forks at a point whose earlier calls are recorded');
  const forked = await mesh.waitForStatus(given.json.id, 'waiting');
  t.same(
    forked.pendingApprovals.map((p: { callId: string }) => p.callId),
    ['t0-call1'],
    'the calls after the point run live: the second note asks again',
  );
});

t.test('a result for a model call, a bad input or a malformed body is invalid input', async (t) => {
  const model = await fork(lead.id, { fromCallId: 't1-model', result: 'x' });
  t.same(error(model), [400, 'invalid_input']);
  t.same(model.json.error.details, [
    { path: '/result', message: 'must be absent: t1-model is a model call' },
  ]);
  const input = await fork(lead.id, { fromCallId: 't1-model', input: { prompt: 5 } });
  t.same(error(input), [400, 'invalid_input']);
  t.same(
    input.json.error.details,
    [{ path: '/prompt', message: 'must be string' }],
    'paths inside the input',
  );
  t.same(error(await fork(lead.id, {})), [400, 'invalid_input']);
  t.same(error(await fork(lead.id, { fromCallId: 't1-model', extra: 1 })), [400, 'invalid_input']);
  t.same(error(await fork(lead.id, { fromCallId: 'bad id!' })), [400, 'invalid_input']);
  const empty = await mesh.gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    headers: { ...bearer('k-all'), 'content-type': 'application/json' },
  });
  t.same([empty.statusCode, JSON.parse(empty.body).error.code], [400, 'invalid_json']);
  t.same(error(await fork(lead.id, { fromCallId: 't1-model' }, 'k-all', 'wait=1000')), [
    400,
    'invalid_input',
  ]);
});

t.test('an agent whose definition changed since the node ran is refused, naming what changed', async (t) => {
  const text = fs.readFileSync(mesh.configFile, 'utf8').replace('"@agent lead"', '"@agent lead, v2"');
  const config = parseConfig(text, mesh.configFile, {}, 'yaml');
  const { gateway } = await listenGateway(t, mesh, { config, apiKeys: 'k-all' });
  const res = await gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    payload: { fromCallId: 't1-model' },
    headers: bearer('k-all'),
  });
  const body = JSON.parse(res.body);
  t.same([res.statusCode, body.error.code], [409, 'plan_changed']);
  t.equal(
    body.error.message,
    'The definition of agent lead changed since the invocation ran: instructions changed.',
  );
  // The earlier definition no longer stored (its key expired): the change is still refused.
  for (const key of await mesh.client.keys(`${keyLayout(mesh.prefix).definition('*')}`))
    await mesh.client.del(key);
  const unknown = await gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    payload: { fromCallId: 't1-model' },
    headers: bearer('k-all'),
  });
  t.match(JSON.parse(unknown.body).error, { code: 'plan_changed', message: /no longer known/ });
});

t.test('an invocation with records past the bounds is refused before they are read', async (t) => {
  const { gateway } = await listenGateway(t, mesh, { apiKeys: 'k-all,k-other', maxForkRecords: 3 });
  const res = await gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    payload: { fromCallId: 't1-model' },
    headers: bearer('k-all'),
  });
  const body = JSON.parse(res.body);
  t.same([res.statusCode, body.error.code], [422, 'fork_too_large']);
  t.match(body.error.message, /has 5 call records \(MESH_MAX_FORK_RECORDS is 3\)/);
  const bytes = await listenGateway(t, mesh, { apiKeys: 'k-all', maxForkBytes: 1024 });
  const big = await bytes.gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    payload: { fromCallId: 't1-model' },
    headers: bearer('k-all'),
  });
  t.match(JSON.parse(big.body).error, {
    code: 'fork_too_large',
    message: /bytes of call records \(MESH_MAX_FORK_BYTES is 1024\)/,
  });
  const other = await gateway.app.inject({
    method: 'POST',
    url: `/invocations/${lead.id}/fork`,
    payload: { fromCallId: 't1-model' },
    headers: bearer('k-other'),
  });
  t.equal(other.statusCode, 404, "another key's invocation is not found, whatever its size");
});

t.test('Idempotency-Keys are scoped to the API key', async (t) => {
  const own = (await mesh.invoke('lead', { prompt: 'go' }, 'wait=30', bearer('k-other'))).json;
  const key = { 'idempotency-key': 'same' };
  const a = await mesh.request('POST', `/invocations/${lead.id}/fork`, {
    payload: { fromCallId: 't1-model' },
    headers: { ...bearer('k-all'), ...key },
  });
  const b = await mesh.request('POST', `/invocations/${own.id}/fork`, {
    payload: { fromCallId: 't1-model' },
    headers: { ...bearer('k-other'), ...key },
  });
  t.equal(a.status, 200);
  t.equal(b.status, 200);
  t.not(a.json.id, b.json.id);
  const view = await mesh.get(`/invocations/${b.json.id}`, bearer('k-all'));
  t.equal(view.status, 404, 'the fork belongs to the key that made it');
});
