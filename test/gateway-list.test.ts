// GET /invocations (docs/reference/rest-api.md): recent root invocations, newest first, filtered by agent and status,
// paged by an opaque cursor, and only the caller's own when MESH_API_KEYS is set.
import { createHash } from 'node:crypto';
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const alpha = { authorization: 'Bearer alpha-key' };
const beta = { authorization: 'Bearer beta-key' };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const mesh = await startMesh(t, {
  apiKeys: 'alpha-key,beta-key',
  headers: alpha,
  agentsYaml: `
  parent:
    instructions: "@agent parent"
    subagents: [echo]
  echo:
    instructions: "@agent echo"
  broken:
    instructions: "@agent broken"
`,
  script: (r) => {
    if (r.agent === 'broken') return { status: 400 };
    if (r.agent === 'parent' && turnOf(r) === 0)
      return { calls: [{ name: '_subagent_echo', args: { prompt: 'hi' } }] };
    return { final: 'done' };
  },
});
const keys = keyLayout(mesh.prefix);

const started: { id: string; agent: string; status: string }[] = [];
for (const [agent, auth] of [
  ['echo', alpha],
  ['parent', alpha],
  ['broken', alpha],
  ['echo', beta],
  ['echo', alpha],
  ['broken', alpha],
  ['echo', alpha],
  ['parent', beta],
] as const) {
  const res = await mesh.invoke(agent, { prompt: agent }, 'wait=30', auth);
  if (auth === alpha) started.push({ id: res.json.id, agent, status: res.json.status });
}
const newestFirst = [...started].reverse();
const ids = (items: { id: string }[]) => items.map((i) => i.id);

t.test('GET /invocations lists root invocations newest first, without input, output and calls', async (t) => {
  const res = await mesh.get('/invocations');
  t.equal(res.status, 200);
  t.strictSame(ids(res.json.items), ids(newestFirst), 'no child invocation, no other key');
  t.notOk(res.json.nextCursor, 'one page');
  const first = res.json.items[0];
  t.strictSame(Object.keys(first).sort(), [
    'agent',
    'createdAt',
    'deadline',
    'finishedAt',
    'id',
    'rootId',
    'startedAt',
    'status',
    'treeUsage',
    'usage',
  ]);
  t.strictSame(first, { ...first, agent: 'echo', status: 'succeeded', rootId: first.id });
  const failed = res.json.items.find((i: { agent: string }) => i.agent === 'broken');
  t.equal(failed.status, 'failed');
  t.equal(failed.error.code, 'model_error', 'a failure carries its error');
});

t.test("a planner's summary counts its whole tree's usage, as its view does", async (t) => {
  const planner = started.find((i) => i.agent === 'parent')!;
  const view = (await mesh.get(`/invocations/${planner.id}`)).json;
  t.equal(view.treeUsage.modelCalls, 3, "the planner's two model calls and its child's one");
  const item = (await mesh.get('/invocations?agent=parent')).json.items.find(
    (i: { id: string }) => i.id === planner.id,
  );
  t.strictSame(item.treeUsage, view.treeUsage);
  t.strictSame(item.usage, view.usage);
});

t.test('filters by agent and status; an unknown agent lists nothing; a bad value is 400', async (t) => {
  const echo = await mesh.get('/invocations?agent=echo');
  t.strictSame(ids(echo.json.items), ids(newestFirst.filter((i) => i.agent === 'echo')));
  const failed = await mesh.get('/invocations?status=failed');
  t.strictSame(ids(failed.json.items), ids(newestFirst.filter((i) => i.status === 'failed')));
  t.strictSame((await mesh.get('/invocations?agent=parent&status=failed')).json.items, []);
  t.strictSame((await mesh.get('/invocations?agent=nobody')).json, { items: [] });
  for (const [query, path] of [
    ['status=done', '/status'],
    ['agent=no%20such', '/agent'],
    ['cursor=%24%24', '/cursor'],
    ['cursor=bm90LWEtY3Vyc29y', '/cursor'],
    ['color=red', '/color'],
  ] as const) {
    const res = await mesh.get(`/invocations?${query}`);
    t.equal(res.status, 400, query);
    t.equal(res.json.error.code, 'invalid_input');
    t.equal(res.json.error.details[0].path, path, query);
  }
});

t.test('limit is 1 to 100', async (t) => {
  for (const limit of ['0', '101', '-1', 'abc', '1.5', '']) {
    const res = await mesh.get(`/invocations?limit=${limit}`);
    t.equal(res.status, 400, limit);
    t.equal(res.json.error.details[0].path, '/limit');
  }
  t.equal((await mesh.get('/invocations?limit=100')).status, 200);
  const one = await mesh.get('/invocations?limit=1');
  t.strictSame(ids(one.json.items), [newestFirst[0]!.id]);
  t.type(one.json.nextCursor, 'string');
});

t.test('pages follow nextCursor without duplicates or gaps', async (t) => {
  const seen: string[] = [];
  let url = '/invocations?limit=2';
  for (let page = 0; page < 10; page++) {
    const res = await mesh.get(url);
    t.equal(res.status, 200);
    t.ok(res.json.items.length <= 2);
    seen.push(...ids(res.json.items));
    if (!res.json.nextCursor) break;
    url = `/invocations?limit=2&cursor=${res.json.nextCursor}`;
  }
  t.strictSame(seen, ids(newestFirst));
});

t.test('only the invocations of the calling key are listed', async (t) => {
  const res = await mesh.get('/invocations', beta);
  t.strictSame(
    res.json.items.map((i: { agent: string }) => i.agent),
    ['parent', 'echo'],
  );
  t.equal((await mesh.get('/invocations', {})).status, 401);
});

t.test('many invocations of one millisecond page without duplicates or gaps', async (t) => {
  // 45 roots created at the same instant: more than one batch of the recent set shares a score.
  const at = Date.now() - 60_000;
  const tied = Array.from({ length: 45 }, (_, i) => `inv_${i.toString(16).padStart(32, 'c')}`);
  const p = mesh.client.pipeline();
  for (const id of tied) {
    p.hset(keys.invocation(id, id), {
      v: '1',
      id,
      agent: 'tied',
      status: 'succeeded',
      rootId: id,
      createdAt: String(at),
      deadline: String(at + 1000),
      owner: sha('alpha-key'),
    });
    p.zadd(keys.recent(), at, id);
  }
  await p.exec();
  const seen: string[] = [];
  let cursor = '';
  for (let page = 0; page < 20; page++) {
    const res = await mesh.get(`/invocations?agent=tied&limit=7${cursor}`);
    seen.push(...ids(res.json.items));
    if (!res.json.nextCursor) break;
    cursor = `&cursor=${res.json.nextCursor}`;
  }
  t.strictSame(seen, [...tied].sort().reverse());
  const byDefault = await mesh.get('/invocations?agent=tied');
  t.equal(byDefault.json.items.length, 20, 'a page holds 20 by default');
  t.type(byDefault.json.nextCursor, 'string');
});

t.test('an entry whose invocation expired is skipped and removed from the set', async (t) => {
  const gone = `inv_${'f'.repeat(32)}`;
  await mesh.client.zadd(keys.recent(), Date.now(), gone);
  const res = await mesh.get('/invocations?agent=echo');
  t.notOk(ids(res.json.items).includes(gone));
  t.equal(await mesh.client.zscore(keys.recent(), gone), null, 'removed');
});

t.test('the OpenAPI document describes the page', async (t) => {
  const op = (await mesh.get('/docs/json')).json.paths['/invocations'].get;
  const page = op.responses['200'].content['application/json'].schema;
  t.strictSame(page.required, ['items']);
  t.ok(page.properties.nextCursor);
  t.strictSame(Object.keys(page.properties.items.items.properties).sort(), [
    'agent',
    'createdAt',
    'deadline',
    'error',
    'finishedAt',
    'forkedFrom',
    'id',
    'rootId',
    'startedAt',
    'status',
    'treeUsage',
    'usage',
  ]);
  t.strictSame(
    op.parameters.map((p: { name: string }) => p.name),
    ['agent', 'status', 'limit', 'cursor'],
  );
});
