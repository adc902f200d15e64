// What the gateway admits at its edge, checked where a run is needed: invocations under
// MESH_API_KEYS, each seen only by the key that started it, and the bounds of an invoke
// (docs/reference/bounds.md). What it refuses before anything runs is services/gateway/test/. Each
// former file's tests are one heading subtest below, with its own mesh, started in it and stopped at
// its end.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

// ---------------------------------------------------------------------------------------------------
// MESH_API_KEYS (docs/reference/rest-api.md, Authentication) on invocations that run: an invocation
// is visible, cancellable and streamable only with the key that started it, children included. What
// the gateway refuses before anything runs (401, 403, scopes, /docs) is
// services/gateway/test/auth.test.ts.
t.test(
  'MESH_API_KEYS on invocations that run: visible, cancellable and streamable only with their key',
  async (t) => {
    const alpha = { authorization: 'Bearer alpha-key-1' };
    const beta = { authorization: 'Bearer beta-key-2' };
    const scoped = { authorization: 'Bearer scoped-key-3' };

    const mesh = await startMesh(t, {
      apiKeys: 'alpha-key-1, beta-key-2, scoped-key-3=echo',
      headers: alpha,
      agentsYaml: `
  planner:
    description: Plans.
    instructions: "@agent planner"
    subagents: [echo]
  echo:
    description: Echoes.
    instructions: "@agent echo"
  slow:
    instructions: "@agent slow"
`,
      script: (r) => {
        if (r.agent === 'planner')
          return turnOf(r) === 0
            ? { calls: [{ name: '_subagent_echo', args: { prompt: 'hi' } }] }
            : { final: 'planned' };
        return { final: `${r.agent} says hi`, latencyMs: r.agent === 'slow' ? 1500 : 0 };
      },
    });

    t.test('a scoped key runs its own agent; another agent never runs', async (t) => {
      const ok = await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', scoped);
      t.equal(ok.status, 200);
      t.equal(ok.json.output, 'echo says hi');
      t.equal((await mesh.invoke('planner', { prompt: 'x' }, 'wait=0', scoped)).status, 403);
      t.notOk(mesh.model.of('planner').length, 'planner never ran');
    });

    t.test('/readyz needs no key, with its runners up', async (t) => {
      const res = await mesh.gateway.app.inject({ method: 'GET', url: '/readyz' });
      t.equal(res.statusCode, 200);
      t.strictSame(res.json(), { status: 'ready' });
    });

    t.test("another key's invocation and its children answer 404 for GET and DELETE", async (t) => {
      const res = await mesh.invoke('planner', { prompt: 'plan' });
      t.equal(res.status, 200);
      const { id } = res.json;
      const childId = res.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
      const owner = await mesh.client.hget(keyLayout(mesh.prefix).invocation(id, id), 'owner');
      t.equal(
        owner,
        createHash('sha256').update('alpha-key-1').digest('hex'),
        'the owner is a hash of the key',
      );
      for (const x of [id, childId]) {
        t.equal((await mesh.get(`/invocations/${x}`)).status, 200, 'its own key sees it');
        for (const headers of [beta, scoped]) {
          for (const method of ['GET', 'DELETE'] as const) {
            const other = await mesh.request(method, `/invocations/${x}`, { headers });
            t.equal(other.status, 404, `${method} ${x}`);
            t.strictSame(other.json, {
              error: { code: 'invocation_not_found', message: `No invocation has id ${x}.` },
            });
          }
        }
      }
    });

    t.test('another key cannot cancel a running invocation; its own key can', async (t) => {
      const started = await mesh.invoke('slow', { prompt: 'x' }, 'wait=0');
      t.equal(started.status, 202);
      const { id } = started.json;
      t.equal((await mesh.request('DELETE', `/invocations/${id}`, { headers: beta })).status, 404);
      t.equal((await mesh.waitForStatus(id, 'succeeded')).output, 'slow says hi', 'it ran to the end');
      const again = await mesh.invoke('slow', { prompt: 'y' }, 'wait=0');
      const cancelled = await mesh.request('DELETE', `/invocations/${again.json.id}`);
      t.equal(cancelled.status, 202);
      await mesh.waitForStatus(again.json.id, 'cancelled');
    });

    t.test("another API key cannot stream an invocation's events", async (t) => {
      const started = await mesh.invoke('echo', { prompt: 'go' }, 'wait=30', alpha);
      const url = `/invocations/${started.json.id}/events`;
      const asBeta = await mesh.gateway.app.inject({ method: 'GET', url, headers: beta });
      t.equal(asBeta.statusCode, 404);
      t.equal(asBeta.json().error.code, 'invocation_not_found');
      t.equal((await mesh.gateway.app.inject({ method: 'GET', url })).statusCode, 401);
      const asAlpha = await mesh.gateway.app.inject({ method: 'GET', url, headers: alpha });
      t.equal(asAlpha.statusCode, 200);
      t.match(asAlpha.body, /event: output/);
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// docs/reference/bounds.md at the gateway's invoke, where a run is needed: the largest ?timeout
// runs, a JSON string body reaches a code agent without input schema, brackets inside strings are
// no nesting. What the gateway refuses or stores before a run is
// services/gateway/test/bounds.test.ts.
t.test('the bounds of an invoke where a run is needed', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bounds-'));
  const codeAgent = path.join(dir, 'any-input.mjs');
  fs.writeFileSync(codeAgent, "export default { run: async (input) => 'got ' + typeof input };\n");

  const mesh = await startMesh(t, {
    agentsYaml: `
  chat: {description: Chats., instructions: "@agent chat"}
  coder: {module: '${codeAgent}'}
`,
    script: () => ({ final: 'ok' }),
  });

  t.test('the largest timeout runs, with its deadline', async (t) => {
    const max = await mesh.invoke('chat', { prompt: 'hi' }, 'wait=30&timeout=86400');
    t.equal(max.status, 200, 'the maximum itself is accepted');
    t.equal(Date.parse(max.json.deadline) - Date.parse(max.json.createdAt), 86_400_000);
  });

  t.test('a JSON string body reaches a code agent without input schema', async (t) => {
    const ok = await mesh.gateway.app.inject({
      method: 'POST',
      url: '/agents/coder/invoke?wait=30',
      headers: { 'content-type': 'application/json' },
      payload: '"text"',
    });
    t.equal(ok.json().output, 'got string', 'a JSON body still reaches the code agent');
  });

  t.test('brackets inside strings are no nesting', async (t) => {
    const strings = `{"prompt":"${'['.repeat(5000)}"}`;
    const res = await mesh.invoke('chat', JSON.parse(strings), 'wait=30');
    t.equal(res.status, 200, 'brackets inside strings are no nesting');
    t.equal(res.json.output, 'ok');
  });
});
