// What an A2A message may carry that the mesh must not act on (issue 24, items 1 and 7):
// `referenceTaskIds` (the SDK loads each named task and keeps it: 1,500 references to one large
// task took the gateway's heap), and no `contextId` (the SDK makes one up, which must name no
// session: each plain SendMessage left three session keys for 30 days).
import { type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import t from 'tap';
import { a2aSend } from './support/a2a-message.js';
import { startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';

const big = 'x'.repeat(300_000);
const mesh = await startMesh(t, {
  agentsYaml: `
  echo: {description: Answers., instructions: "@agent echo"}
`,
  script: (r) => ({ final: r.messages.at(-1)?.content === 'big' ? big : 'hello' }),
});
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;
const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({})] }).createFromUrl(
  `${base}/a2a/echo/.well-known/agent-card.json`,
  '',
);

t.test('referenceTaskIds are never read: 1,500 references to a large task cost no Redis read', async (t) => {
  const large = (await client.sendMessage(a2aSend('big'))) as Task;
  t.equal(large.status?.state, TaskState.TASK_STATE_COMPLETED);
  const monitor = await monitorRedis(mesh.redis.port);
  t.teardown(() => monitor.stop());
  const req = a2aSend('hi');
  req.message!.referenceTaskIds = Array.from({ length: 1500 }, () => large.id);
  req.configuration = {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: true,
  } as never;
  const task = (await client.sendMessage(req)) as Task;
  t.ok(task.id && task.id !== large.id, 'the message started its own task');
  await mesh.waitForStatus(task.id, 'succeeded');
  monitor.stop();
  const reads = monitor.seen.filter((c) => c.args.some((a) => a.includes(large.id)));
  t.equal(reads.length, 0, `commands naming the referenced task: ${reads.length}`);
});

t.test('a message without a contextId continues no session and creates none', async (t) => {
  const task = (await client.sendMessage(a2aSend('no context'))) as Task;
  t.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  const sessionKeys = await mesh.client.keys('mesh:{session:*');
  t.same(sessionKeys, [], 'no session key in Redis');
  t.not(task.contextId, '', 'the task still has a context');
  t.equal((await mesh.get(`/sessions/${task.contextId}`)).status, 404);
  const read = (await client.getTask({ tenant: '', id: task.id, historyLength: undefined })) as Task;
  t.equal(read.contextId, task.contextId, 'GetTask answers the same context');
  const named = (await client.sendMessage(a2aSend('with context', { contextId: 'conv-1' }))) as Task;
  t.equal(named.contextId, 'conv-1');
  t.same(
    (await mesh.get('/sessions/conv-1')).json.invocations,
    [named.id],
    "the client's own contextId is a session",
  );
});
