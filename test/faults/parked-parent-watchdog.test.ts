// BullMQ can leave a parent in waiting-children after its last child finished (bullmq #3235,
// #2644). Here the child's link in the parent's dependency set is removed while the child runs,
// which is that bug's state: the child's completion then wakes nobody. The watchdog must resume
// the parent from its records.
import { keyLayout, queueName } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh } from '../support/mesh.js';
import { PARENT_AND_CHILD, parentAndChild } from '../support/parent-and-child.js';
import { waitUntil } from '../support/wait-until.js';

t.test('a parent left parked after its last child finished is resumed by the watchdog', async (t) => {
  const mesh = await startMesh(t, {
    watchdog: { intervalMs: 300, minParkedMs: 500 },
    agentsYaml: PARENT_AND_CHILD,
    script: parentAndChild({ child: 1000 }),
  });
  const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => mesh.model.of('child').length === 1,
    20_000,
    () => 'the child model call',
  );
  const { id } = started.json;
  const childId = (await mesh.get(`/invocations/${id}`)).json.calls.find((c: any) => c.childId).childId;
  const bull = keyLayout(mesh.prefix).bullPrefix;
  const removed = await mesh.client.srem(
    `${bull}:${queueName('parent')}:${id}:dependencies`,
    `${bull}:${queueName('child')}:${childId}`,
  );
  t.equal(removed, 1, 'the parent was parked on the child');
  const done = await mesh.waitForStatus(id, 'succeeded', 30_000, () => 'the watchdog to resume the parent');
  t.equal(done.output, 'parent got child answer');
  // The point: turn 0's recorded reply is replayed, never re-issued. Turn 1 is in doubt until its
  // reply is written with the finish; a job lock that lapses on a loaded machine re-issues it
  // (docs/architecture/durability-and-fencing.md: an in-doubt model call is re-issued), so it may appear more than once.
  const turns = mesh.model.of('parent').map(turnOf);
  t.same(turns.slice(0, 2), [0, 1], 'the parent resumed at its second model call');
  t.equal(turns.filter((turn) => turn === 0).length, 1, 'its first model call was replayed, not re-issued');
  t.equal(mesh.model.of('child').length, 1);
});

t.test("a parent's deadline fires while it waits on a child that never runs", async (t) => {
  const mesh = await startMesh(t, {
    watchdog: { intervalMs: 300, minParkedMs: 500 },
    runnerAgents: ['parent'],
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
    script: () => ({ calls: [{ name: '_subagent_child', args: { prompt: 'x' } }] }),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' }, 'wait=30&timeout=1');
  t.equal(res.status, 200);
  t.match(res.json, { status: 'failed', error: { code: 'deadline_exceeded' } });
  t.equal(mesh.model.of('parent').length, 1);
});
