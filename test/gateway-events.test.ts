// GET /invocations/{id}/events: Server-Sent Events of an invocation's whole tree, resumable with
// Last-Event-ID, ending after the requested invocation's terminal event.
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

interface SseEvent {
  id: string;
  event: string;
  data: { invocationId: string; parentId?: string; agent: string; type: string; data: any };
}

/** Reads a whole SSE response (it must end by itself) into its events. */
async function readEvents(url: string, headers: Record<string, string> = {}): Promise<SseEvent[]> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? '';
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) };
    });
}

t.test('the event stream shows the whole tree in order, each invocation ends with a status', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
    script: (r) =>
      r.agent === 'child'
        ? { final: 'child answer', latencyMs: 300 }
        : turnOf(r) === 0
          ? { calls: [{ name: '_subagent_child', args: { prompt: 'x' } }] }
          : { final: 'parent answer' },
  });
  await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  const id = started.json.id as string;
  const events = await readEvents(`${base}/invocations/${id}/events`);
  const childId = events.find((e) => e.event === 'delegation_started')!.data.data.childId;
  const who = (e: SseEvent) =>
    e.data.invocationId === id ? 'parent' : e.data.invocationId === childId ? 'child' : '?';
  const story = events.map(
    (e) => `${who(e)}:${e.event}${e.event === 'status' ? `:${e.data.data.status}` : ''}`,
  );
  t.same(story, [
    'parent:status:queued',
    'parent:status:running',
    'parent:model_call',
    'parent:delegation_started',
    'parent:status:waiting',
    'child:status:running',
    'child:model_call',
    'child:output',
    'child:status:succeeded',
    'parent:delegation_finished',
    'parent:status:running',
    'parent:model_call',
    'parent:output',
    'parent:status:succeeded',
  ]);
  for (const e of events) {
    t.equal(e.data.type, e.event, 'the SSE event name is the event type');
    t.ok(e.data.agent && e.data.invocationId, 'every event names its invocation and agent');
  }
  t.ok(
    events.filter((e) => who(e) === 'child').every((e) => e.data.parentId === id),
    "the child's events carry their parent",
  );
  t.same(events.at(-2)!.data.data, { status: 'succeeded', output: 'parent answer' });
  t.same(events.at(-1)!.data.data, { status: 'succeeded' }, 'the root ends with its terminal status');

  const resumed = await readEvents(`${base}/invocations/${id}/events`, { 'last-event-id': events[6]!.id });
  t.same(
    resumed.map((e) => e.id),
    events.slice(7).map((e) => e.id),
    'Last-Event-ID resumes right after that event',
  );

  const childOnly = await readEvents(`${base}/invocations/${childId}/events`);
  t.same(
    childOnly.map((e) => e.event),
    ['status', 'model_call', 'output', 'status'],
    "a child's stream holds its own subtree and ends with its terminal status",
  );
});

t.test('an unknown invocation has no event stream', async (t) => {
  const mesh = await startMesh(t, { agentsYaml: '  a: {instructions: "@agent a"}\n' });
  const res = await mesh.gateway.app.inject({
    method: 'GET',
    url: '/invocations/inv_0123456789abcdef0123456789abcdef/events',
  });
  t.equal(res.statusCode, 404);
  t.equal(res.json().error.code, 'invocation_not_found');
});
