// Errors name what is wrong (issue 9), where runs are needed: a terminal `status` event on every
// invocation's stream, children's too. The refusals are services/gateway/test/openapi-errors.test.ts.
import t from 'tap';
import { openapiMesh } from './fixtures/openapi-client/openapi-mesh.js';
import { listen, startMesh } from './support/mesh.js';

const mesh = await startMesh(t, openapiMesh);
const base = await listen(mesh);

interface SseEvent {
  id: string;
  event: string;
  data: { invocationId: string; type: string; data: { status?: string } };
}

/** Reads a whole event stream (it ends after the invocation's terminal event). */
async function readEvents(url: string): Promise<SseEvent[]> {
  const text = await (await fetch(url)).text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('id: '))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))!
          .slice(name.length + 2);
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) };
    });
}

t.test('every invocation of a tree ends its part of the stream with a terminal status event', async (t) => {
  const lead = await mesh.invoke('lead', { prompt: 'go' }, 'wait=60');
  t.equal(lead.json.status, 'succeeded');
  const events = await readEvents(`${base}/invocations/${lead.json.id}/events`);
  const ids = [...new Set(events.map((e) => e.data.invocationId))];
  t.equal(ids.length, 2, 'the root and its child');
  for (const id of ids) {
    const own = events.filter((e) => e.data.invocationId === id);
    const last = own.at(-1)!;
    t.equal(last.event, 'status', `${id === lead.json.id ? 'the root' : 'the child'} ends with a status`);
    t.strictSame(last.data.data, { status: 'succeeded' });
    t.equal(own.at(-2)!.event, 'output', 'right after its output');
  }
  t.equal(events.at(-1)!.data.invocationId, lead.json.id, "the stream ends with the root's status");

  const slow = await mesh.invoke('slow', { prompt: 'wait' }, 'wait=0');
  await mesh.request('DELETE', `/invocations/${slow.json.id}`);
  const cancelled = await readEvents(`${base}/invocations/${slow.json.id}/events`);
  t.match(cancelled.at(-1)!.data, { type: 'status', data: { status: 'cancelled' } });
});
