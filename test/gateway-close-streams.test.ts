// Closing a gateway ends its open tree streams first (docs/guides/streaming.md): an open
// events?deltas=true stream of a long invocation must not hold gateway.close() until it ends.
import t from 'tap';
import { listenGateway, startMesh } from './support/mesh.js';

const mesh = await startMesh(t, {
  agentsYaml: `
  slow: {instructions: "@agent slow"}
`,
  script: () => ({ final: 'late', latencyMs: 120_000 }),
});

t.test('closing the gateway ends an open delta stream instead of waiting for it', async (t) => {
  const { gateway, base } = await listenGateway(t, mesh, {});
  const started = await fetch(`${base}/agents/slow/invoke?wait=0`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'take your time' }),
  });
  const { id } = (await started.json()) as { id: string };
  t.teardown(() => mesh.request('DELETE', `/invocations/${id}`));
  const res = await fetch(`${base}/invocations/${id}/events?deltas=true`);
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the stream is open
  await gateway.close();
  for (let r = await reader.read().catch(() => ({ done: true })); !r.done; )
    r = await reader.read().catch(() => ({ done: true }));
  const view = await mesh.get(`/invocations/${id}`);
  t.equal((view.json as { status: string }).status, 'running', 'closed while the invocation still runs');
});
