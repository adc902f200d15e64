// Sessions across runner crashes (docs/architecture/durability-and-fencing.md, docs/guides/sessions.md): an invocation's finish and its session's
// advance are two steps (two hash tags); a runner dying around them loses no exchange and stalls
// no queue, whoever notices settles the session.
import { JOB_RETRY, keyLayout, queueName } from '@agentmesh/shared';
import { Queue } from 'bullmq';
import t from 'tap';
import type { SeenRequest } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';
import { runnerPid } from './support/runner-pid.js';
import { waitUntil } from './support/wait-until.js';

const chat = '  chat: {description: Chats., instructions: "@agent chat"}\n';
const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;

t.test(
  'a runner SIGKILLed while a session turn runs: it finishes elsewhere, the queued turn runs after it and sees it',
  async (t) => {
    const mesh = await startMesh(t, {
      runners: 0,
      agentsYaml: chat,
      script: (r) => ({ final: `answer to ${lastUser(r)}`, latencyMs: lastUser(r) === 'first' ? 1500 : 0 }),
    });
    const runners = [0, 1].map(() => startService(t, 'runner', mesh.env));
    await waitUntil(
      async () =>
        (await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('chat'), Date.now(), '+inf')) === 2,
      60_000,
      () => runners.map((r) => r.output()).join('\n'),
    );
    const first = await mesh.invoke('chat', { prompt: 'first' }, 'wait=0&session=crashy');
    const second = await mesh.invoke('chat', { prompt: 'second' }, 'wait=0&session=crashy');
    t.equal(second.json.status, 'queued');
    const call = await waitUntil(
      async () => (await mesh.get(`/invocations/${first.json.id}`)).json?.calls?.find((c: any) => c.runner),
      20_000,
      () => 'the first model call',
    );
    process.kill(runnerPid(call.runner), 'SIGKILL');
    const done = await mesh.waitForStatus(second.json.id, 'succeeded', 60_000, () => 'the queued turn');
    t.equal(done.output, 'answer to second');
    t.equal((await mesh.get(`/invocations/${first.json.id}`)).json.status, 'succeeded');
    const requests = mesh.model.of('chat');
    const secondCall = requests.find((r) => lastUser(r) === 'second')!;
    const firstCalls = requests.filter((r) => lastUser(r) === 'first');
    t.ok(
      firstCalls.every((r) => r.aborted || secondCall.arrivedAt >= r.doneAt!),
      'the queued turn started after the first one ended',
    );
    t.same(
      secondCall.messages.map((m) => `${m.role}:${m.content}`),
      ['system:@agent chat', 'user:first', 'assistant:answer to first', 'user:second'],
    );
    const session = await mesh.get('/sessions/crashy');
    t.same(session.json.invocations, [first.json.id, second.json.id]);
    t.equal(session.json.messages.length, 4, 'each exchange once');
  },
);

t.test(
  'a finished invocation whose job comes back to a runner gets its session advanced there',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: (r) => ({ final: `answer to ${lastUser(r)}` }),
    });
    const first = await mesh.invoke('chat', { prompt: 'kept' }, 'session=job-back');
    const id = first.json.id;
    const meta = 'mesh:{session:job-back}:meta';
    await waitUntil(
      async () => (await mesh.client.hget(meta, 'current')) === '',
      10_000,
      () => 'the advance',
    );
    // What a runner SIGKILLed right after the FINISH step leaves, and its job, whose lock lapsed,
    // gone to another runner: the session still names the invocation and lacks its exchange.
    await mesh.client.hset(meta, 'current', id);
    await mesh.client.del('mesh:{session:job-back}:messages');
    const keys = keyLayout(mesh.prefix);
    const queue = new Queue(queueName('chat'), { connection: mesh.client, prefix: keys.bullPrefix });
    t.teardown(() => queue.close());
    await queue.remove(id);
    await queue.add(
      'chat',
      { v: 1, invocationId: id, rootId: id, agent: 'chat' },
      { jobId: id, ...JOB_RETRY },
    );
    // Read from Redis, not through the gateway (whose reads settle sessions too).
    await waitUntil(
      async () => (await mesh.client.hget(meta, 'current')) === '',
      10_000,
      () => 'the runner to settle the session',
    );
    const messages = (await mesh.client.lrange('mesh:{session:job-back}:messages', 0, -1)).map((m) =>
      JSON.parse(m),
    );
    t.same(messages, [
      { role: 'user', content: 'kept', invocationId: id },
      { role: 'assistant', content: 'answer to kept', invocationId: id },
    ]);
    t.equal(mesh.model.requests.length, 1, 'the finished invocation did not run again');
  },
);
