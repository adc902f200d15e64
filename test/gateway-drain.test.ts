// A gateway shutting down finishes its open requests: one waiting for an invocation answers at once
// with the invocation as it stands (202 + Location) rather than holding the shutdown.
import t from 'tap';
import { startMesh } from './support/mesh.js';

t.test('closing the gateway answers a request that waits for an invocation with 202 at once', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  slow: {instructions: "@agent slow"}
`,
    script: () => ({ final: 'late', latencyMs: 3000 }),
  });
  await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = mesh.gateway.app.server.address() as { port: number };
  const pending = fetch(`http://127.0.0.1:${port}/agents/slow/invoke?wait=60`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'go' }),
  });
  while (mesh.model.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
  const closed = mesh.gateway.close();
  const res = await pending;
  await closed;
  t.equal(res.status, 202);
  const view = (await res.json()) as { id: string; status: string };
  t.equal(res.headers.get('location'), `/invocations/${view.id}`);
  t.equal(view.status, 'running', 'answered before the invocation finished');
  t.notOk(mesh.model.requests[0]!.doneAt, 'the model call was still in flight');
});
