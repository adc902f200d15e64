// An invocation's end in the step that completes its job (finish-in-completion.ts): FINISH's
// arguments wait for BullMQ's completion of the job and ride in it, one step for both writes.
// An invocation that had ended already leaves the job to BullMQ's step alone (not written), and
// so does one another activation took over (fenced out) — as a FINISH of its own would.
import { keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { TakenActivation } from '../src/loop/fast-path-ports.js';
import { ActivationStore, FencedOutError } from '../src/loop/store/activation-store.js';
import { COMPLETE_COMMAND } from '../src/queue/fast-path/fetch-scripts.js';
import { FinishesInCompletion } from '../src/queue/fast-path/finish-in-completion.js';
import { takingConnection } from './support/taking-connection.js';

const server = await startRedis();
t.teardown(() => server.stop());
const redis = new Redis(server.url, { maxRetriesPerRequest: null });
t.teardown(() => redis.disconnect());
const keys = keyLayout('finishtest');
const scripts = meshScripts(redis);
const store = new ActivationStore(redis, scripts, keys, 3600);
let n = 0;

type Before = 'nothing' | 'ended' | 'taken over';

/**
 * One job of a fresh invocation, taken by a worker as a runner builds it, whose processor defers
 * the invocation's end to the job's completion after `before` happened; what the deferral answered.
 */
async function endWithJob(t: Test, before: Before) {
  const id = `inv_${String(++n).padStart(32, '0')}`;
  await createRootInvocation(scripts, keys, id);
  const prefix = `{f${n}}`;
  const { connection, takes } = takingConnection(server.url, 'solo', { keys });
  const finishes = new FinishesInCompletion();
  finishes.attach(connection, COMPLETE_COMMAND.name, COMPLETE_COMMAND.keys);
  let answer: Promise<boolean> | undefined;
  const worker = new Worker(
    'agent-solo',
    async (job) => {
      const a = store.taken(takes.take(job.id) as TakenActivation)!;
      if (before === 'ended')
        await store.finish(a.state, a.epoch, {
          status: 'cancelled',
          error: { code: 'cancelled', message: 'x' },
        });
      if (before === 'taken over') await store.activate(id, id, 'r2');
      const step = store.finishStep(
        a.state,
        a.epoch,
        { status: 'succeeded', output: 'ok', content: 'ok' },
        a,
      );
      answer = finishes.defer(job.id!, step);
      answer.catch(() => undefined); // looked at below
    },
    { connection, prefix, autorun: false },
  );
  const queue = new Queue('agent-solo', { connection: redis, prefix });
  t.teardown(async () => {
    await worker.close();
    await queue.close();
    connection.disconnect();
  });
  const monitor = await monitorRedis(server.port);
  t.teardown(() => monitor.stop());
  void worker.run();
  await queue.add('solo', { v: 1, invocationId: id, rootId: id, agent: 'solo' }, { jobId: id });
  await waitUntil(
    async () => (await queue.getJobState(id)) === 'completed',
    5000,
    () => 'the job completes',
  );
  const finishSteps = monitor.seen.filter(
    (c: MonitoredCommand) => c.source !== 'lua' && c.args[0] === 'evalsha' && c.args[2] === '7',
  );
  return {
    answer: answer!,
    status: await redis.hget(keys.invocation(id, id), 'status'),
    finishSteps: finishSteps.length,
  };
}

t.test("the end rides in the job's completion: both written in one step", async (t) => {
  const { answer, status, finishSteps } = await endWithJob(t, 'nothing');
  t.equal(await answer, true, 'written');
  t.equal(status, 'succeeded');
  t.equal(finishSteps, 0, 'no FINISH step of its own');
});

t.test('an invocation that had ended: not written, the job completed all the same', async (t) => {
  const { answer, status } = await endWithJob(t, 'ended');
  t.equal(await answer, false);
  t.equal(status, 'cancelled', 'its end stands');
});

t.test('an invocation another activation took over: fenced out, its state untouched', async (t) => {
  const { answer, status } = await endWithJob(t, 'taken over');
  await t.rejects(answer, FencedOutError);
  t.equal(status, 'running', 'still the other activation’s');
});
