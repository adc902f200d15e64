// A job the gateway's add dispatched to a runner (dispatched-takes.ts) that had just been SIGKILLed: in
// the moment before Redis's view of its connections shows it gone, the add still finds it blocked
// and takes the job for it. The job is then a dead runner's active job, like any other: the
// gone-runner watch moves it back to wait within about a second (the lock is a minute), the other
// runner runs it, and the dead runner leaves the queue's blocked workers and their offers.
import { dispatchKeys, keyLayout, queueName } from '@agentmesh/shared';
import t from 'tap';
import { pinQueueFastPath } from '../support/mesh.js';
import { parentAndChild } from '../support/parent-and-child.js';
import { runnerPid } from '../support/runner-pid.js';
import { twoRunners } from '../support/two-runners.js';
import { waitUntil } from '../support/wait-until.js';

// Dispatched takes are the queue fast path's, in either run mode.
pinQueueFastPath();

const LOCK_MS = 60_000;

t.test(
  'a job dispatched to a runner killed a moment before runs on the other, long before its lock lapses',
  async (t) => {
    const { mesh, runners, ports } = await twoRunners(t, parentAndChild(), LOCK_MS);
    const queueKey = `${keyLayout(mesh.prefix).bullPrefix}:${queueName('parent')}:`;
    const blocked = dispatchKeys.blocked(queueKey);
    // Both block on the parent's queue, registered; the add picks the one registered longest.
    await waitUntil(
      async () => (await mesh.client.zcard(blocked)) === 2,
      60_000,
      () => runners.map((r) => r.output()).join('\n'),
    );
    const [first] = await mesh.client.zrange(blocked, '0', '0');
    const killedAt = Date.now();
    process.kill(runnerPid(first!), 'SIGKILL');
    const res = await mesh.invoke('parent', { prompt: 'go' }, `wait=${LOCK_MS / 2000}`);
    t.equal(res.status, 200, 'finished inside half the lock');
    t.equal(res.json.status, 'succeeded');
    t.equal(res.json.output, 'parent got child answer');
    t.ok(Date.now() - killedAt < LOCK_MS / 2, `${Date.now() - killedAt} ms after the kill`);
    const survivor = runners.findIndex((r) => r.output().includes('has no Redis connection left'));
    t.ok(survivor >= 0, 'the other runner saw the dead one go');
    const metrics = await (await fetch(`http://127.0.0.1:${ports[survivor]}/metrics`)).text();
    t.match(metrics, /^mesh_reclaimed_jobs_total 1$/m, 'and moved on the job dispatched to it');
    t.equal(await mesh.client.zscore(blocked, first!), null, 'the dead runner blocks on nothing');
    t.equal(await mesh.client.hget(dispatchKeys.offers(queueKey), first!), null, 'and offers nothing');
  },
);
