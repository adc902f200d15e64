// Redis (with AOF) restarted mid-invocation: every service reconnects by itself and no invocation
// or record is lost.
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh } from '../support/mesh.js';
import { PARENT_AND_CHILD, parentAndChild } from '../support/parent-and-child.js';
import { waitUntil } from '../support/wait-until.js';

t.test(
  'a Redis restart mid-invocation loses nothing: the tree finishes and recorded calls are not redone',
  async (t) => {
    const mesh = await startMesh(t, {
      aof: true,
      agentsYaml: PARENT_AND_CHILD,
      script: parentAndChild({ child: 1500 }),
    });
    const started = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
    await waitUntil(
      async () => mesh.model.of('child').length === 1,
      20_000,
      () => 'the child model call',
    );
    await mesh.redis.restart();
    const done = await mesh.waitForStatus(
      started.json.id,
      'succeeded',
      60_000,
      () => 'the invocation to finish after the restart',
    );
    t.equal(done.output, 'parent got child answer');
    t.same(
      mesh.model.of('parent').map(turnOf),
      [0, 1],
      'the parent model call recorded before the restart was not redone',
    );
    t.ok(mesh.model.of('child').length <= 2, 'the child call in flight during the restart ran at most twice');
    const after = await mesh.invoke('parent', { prompt: 'again' });
    t.equal(after.json.status, 'succeeded', 'new invocations run after the restart');
  },
);
