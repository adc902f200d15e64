// A job that spends its attempts, for whatever reason, never leaves its invocation running
// (issue 24, item 3): the invocation ends `failed` with `internal`, its event stream ends with its
// terminal event, DELETE sees it terminal, and a parent gets the failed delegation. The fault here
// is a corrupt invocation hash (its `epoch` is no integer), so every activation fails in Redis.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { waitUntil } from '../support/wait-until.js';

const keys = keyLayout('mesh');

const script: FakeScript = (r) => {
  if (r.agent !== 'boss') return { final: 'helped' };
  if (turnOf(r) === 0) return { calls: [{ name: '_subagent_helper', args: { prompt: 'help' } }] };
  return { final: `boss got: ${toolMessagesOf(r)[0]?.content ?? ''}` };
};

const mesh = await startMesh(t, {
  runners: 0,
  script,
  agentsYaml: `
  solo: {instructions: "@agent solo"}
  boss: {instructions: "@agent boss", subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
`,
});

/** Makes every activation of invocation `id` fail in Redis (HINCRBY on a field that is no integer). */
const corrupt = (rootId: string, id: string) => mesh.client.hset(keys.invocation(rootId, id), 'epoch', 'x');

t.test(
  'a root whose job fails for good ends failed, its stream ends and DELETE sees it terminal',
  async (t) => {
    const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
    t.equal(started.status, 202);
    const id: string = started.json.id;
    await corrupt(id, id);
    startService(t, 'runner', { ...mesh.env, RUNNER_AGENTS: 'solo' });
    const view = await mesh.waitForStatus(id, 'failed', 60_000);
    t.equal(view.error.code, 'internal');
    t.match(view.error.message, /^The invocation's job failed for good after 3 attempt\(s\)/);
    t.equal(mesh.model.of('solo').length, 0, 'no activation got as far as the model');
    // The stream ends (inject returns) after the terminal event.
    const events = await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}/events` });
    const data = events.body
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    t.match(data.at(-1), {
      invocationId: id,
      type: 'status',
      data: { status: 'failed', error: { code: 'internal' } },
    });
    const deleted = await mesh.request('DELETE', `/invocations/${id}`);
    t.equal(deleted.status, 200, 'a terminal invocation is returned unchanged');
    t.equal(deleted.json.status, 'failed');
  },
);

t.test('a child whose job fails for good is a failed delegation for its parent', async (t) => {
  startService(t, 'runner', { ...mesh.env, RUNNER_AGENTS: 'boss' });
  const started = await mesh.invoke('boss', { prompt: 'go' }, 'wait=0');
  const id: string = started.json.id;
  // Nobody hosts helper yet: its child waits in its queue while its hash is made unusable.
  const child = await waitUntil(
    async () =>
      (await mesh.get(`/invocations/${id}`)).json.calls.find((c: any) => c.kind === 'subagent')?.childId as
        | string
        | undefined,
    30_000,
    () => 'the delegation to helper',
  );
  await corrupt(id, child);
  startService(t, 'runner', { ...mesh.env, RUNNER_AGENTS: 'helper' });
  const done = await mesh.waitForStatus(id, 'succeeded', 60_000);
  t.match(
    done.output,
    /^boss got: Sub-agent _subagent_helper execute failed: The invocation's job failed for good after 3 attempt/,
  );
  const childView = (await mesh.get(`/invocations/${child}`)).json;
  t.equal(childView.status, 'failed');
  t.equal(childView.error.code, 'internal');
  t.equal(mesh.model.of('helper').length, 0);
});
