// Many parent+child trees at once, on a runner process with the shipped slot count: every job is
// processed and completed with the lock its last take holds, so none is left active until its lock
// lapses. Told by BullMQ's own state, counters and event streams (no job active or locked, no
// `stalled` event, no extra take), never by timing. Before the fix (queue/fast-path/early-start.ts), a
// parent taken again on its resumption was completed with its first take's token and stayed
// active until BullMQ's stalled check moved it; with MESH_QUEUE_FASTPATH=off, before
// queue/taken-lock.ts, the first jobs of a burst lost their locks while the worker still took more
// (services/agent-runner/test/queue-taken-lock.test.ts).
import { keyLayout, queueName } from '@agentmesh/shared';
import { Queue } from 'bullmq';
import t from 'tap';
import { startMesh, startService, type TestMesh } from './support/mesh.js';
import { PARENT_AND_CHILD, parentAndChild } from './support/parent-and-child.js';
import { waitUntil } from './support/wait-until.js';

const CLIENTS = 200;

/** The `stalled` events BullMQ wrote to the queue's event stream (each a job its stalled check moved). */
async function stalledEvents(mesh: TestMesh, queue: Queue): Promise<number> {
  const events = await mesh.client.xrange(queue.keys.events!, '-', '+');
  return events.filter(([, fields]) => fields[1] === 'stalled').length;
}

for (const latencyMs of [0, 20]) {
  t.test(
    `${CLIENTS} parent+child trees at once (model latency ${latencyMs} ms): each job completes with its lock`,
    async (t) => {
      const mesh = await startMesh(t, {
        runners: 0,
        agentsYaml: PARENT_AND_CHILD,
        script: parentAndChild({ parent: latencyMs, child: latencyMs }),
      });
      const keys = keyLayout(mesh.prefix);
      // One runner process with the shipped RUNNER_CONCURRENCY: its workers take hundreds of jobs
      // in a burst, and parents come back to it as they resume. Locks of 10 s, not 3: a
      // loaded machine starves a 3 s lock; a stale token fails however long the lock (a lock that
      // lapses while the worker still takes a burst: queue-taken-lock.test.ts, runner-early-start).
      const runners = [
        startService(t, 'runner', { ...mesh.env, LOG_LEVEL: 'error', RUNNER_LOCK_MS: '10000' }),
      ];
      const output = () => runners.map((r) => r.output()).join('\n');
      await waitUntil(
        async () => (await mesh.client.zcount(keys.runners(), Date.now(), '+inf')) === runners.length,
        60_000,
        output,
      );
      const queues = ['parent', 'child'].map(
        (agent) => new Queue(queueName(agent), { connection: mesh.client, prefix: keys.bullPrefix }),
      );
      t.teardown(() => Promise.all(queues.map((q) => q.close())));

      const started = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => mesh.invoke('parent', { prompt: `go ${i}` }, 'wait=0')),
      );
      const ids = started.map((r) => r.json.id as string);
      for (const id of ids) {
        const done = await mesh.waitForStatus(
          id,
          'succeeded',
          60_000,
          () => `${id} to succeed:\n${output()}`,
        );
        if (done.output !== 'parent got child answer')
          t.fail(`${id} answered ${JSON.stringify(done.output)}`);
      }
      // Every root's job completes once its invocation has (the completion follows the end's write).
      const [parents, children] = queues as [Queue, Queue];
      let counts = {};
      await waitUntil(
        async () => {
          counts = await parents.getJobCounts();
          return (counts as { completed?: number }).completed === CLIENTS;
        },
        30_000,
        () => `${CLIENTS} parent jobs completed: ${JSON.stringify(counts)}`,
      );
      for (const queue of queues) {
        const counts = await queue.getJobCounts('active', 'wait', 'waiting-children', 'failed', 'completed');
        t.same(
          counts,
          { active: 0, wait: 0, 'waiting-children': 0, failed: 0, completed: CLIENTS },
          `${queue.name}: every job completed, none active`,
        );
        const locks = await mesh.client.keys(`${queue.keys['']}*:lock`);
        t.same(locks, [], `${queue.name}: no job holds a lock`);
        t.equal(await stalledEvents(mesh, queue), 0, `${queue.name}: BullMQ's stalled check moved no job`);
      }
      // Each job's own counters: attempts made (`atm`, one: its completion), stalls (`stc`), takes (`ats`). A parent is
      // taken twice (its start, its resumption), a child once; a lock that lapsed adds a take.
      for (const [queue, takes] of [
        [parents, 2],
        [children, 1],
      ] as const) {
        const counters = await Promise.all(
          (await queue.getJobs(['completed'])).map((job) =>
            mesh.client.hmget(queue.toKey(job.id!), 'atm', 'stc', 'ats'),
          ),
        );
        const odd = counters.filter(
          ([atm, stc, ats]) => Number(atm) !== 1 || Number(stc ?? 0) > 0 || Number(ats) > takes,
        );
        t.same(
          odd,
          [],
          `${queue.name}: no job failed an attempt, stalled, or was taken more than ${takes} times`,
        );
      }
      t.notMatch(
        output(),
        /Missing lock|Lock mismatch/,
        'no job was moved with a token its lock did not hold',
      );
    },
  );
}
