// Sessions (docs/guides/sessions.md) under truly concurrent invokes: `reject` and `interrupt` requests fired at
// the same moment at one session, served by two runners, never run two invocations of it at once.
import t from 'tap';
import type { SeenRequest } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

const chat = '  chat: {description: Chats., instructions: "@agent chat"}\n';
const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;
const roles = (r: SeenRequest) => r.messages.map((m) => `${m.role}:${m.content}`);

t.test('reject: invokes fired at once on an idle session, one runs, the others are 409', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: chat,
    runners: 2,
    script: (r) => ({ final: `answer to ${lastUser(r)}`, latencyMs: 300 }),
  });
  const prompts = ['a', 'b', 'c', 'd', 'e'];
  const answers = await Promise.all(
    prompts.map((prompt) => mesh.invoke('chat', { prompt }, 'wait=30&session=once&multitask=reject')),
  );
  const ran = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status !== 200);
  t.equal(ran.length, 1, `exactly one runs: ${answers.map((r) => r.status)}`);
  t.equal(refused.length, prompts.length - 1);
  for (const r of refused) {
    t.equal(r.status, 409);
    t.same(Object.keys(r.json), ['error'], 'an error body, no invocation');
    t.equal(r.json.error.code, 'session_busy');
    t.type(r.json.error.message, 'string');
  }
  const winner = ran[0]!.json;
  t.equal(winner.status, 'succeeded');
  const prompt = prompts[answers.indexOf(ran[0]!)]!;
  t.equal(winner.output, `answer to ${prompt}`, 'the one that runs answers its own input');

  t.same(
    mesh.model.requests.map(lastUser),
    [prompt],
    'the model saw the one that ran, nothing of the refused ones',
  );
  const session = (await mesh.get('/sessions/once')).json;
  t.same(session.invocations, [winner.id], 'the refused ones are not in the session');
  t.same(
    session.messages.map((m: { content: string }) => m.content),
    [prompt, `answer to ${prompt}`],
  );
  const listed = (await mesh.get('/invocations?agent=chat')).json.items.map((x: { id: string }) => x.id);
  t.same(listed, [winner.id], 'no invocation was created for the refused ones');
  t.same(await mesh.client.lrange('mesh:{session:once}:queue', 0, -1), [], 'nothing waits its turn');

  // Once it ended, the session takes one more, and it sees the exchange.
  const next = await mesh.invoke('chat', { prompt: 'next' }, 'wait=30&session=once&multitask=reject');
  t.equal(next.status, 200);
  t.same(roles(mesh.model.requests.at(-1)!), [
    'system:@agent chat',
    `user:${prompt}`,
    `assistant:answer to ${prompt}`,
    'user:next',
  ]);
});

t.test('interrupt: invokes fired at once, the last bound wins, every other ends cancelled', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: chat,
    runners: 2,
    script: (r) => ({ final: `answer to ${lastUser(r)}`, latencyMs: 1500 }),
  });
  const prompts = ['a', 'b', 'c', 'd'];
  const started = await Promise.all(
    prompts.map((prompt) => mesh.invoke('chat', { prompt }, 'wait=0&session=race&multitask=interrupt')),
  );
  // 202, or 200 for one that an interrupt bound after it had already ended by the time it answered.
  t.ok(
    started.every((r) => [200, 202].includes(r.status) && r.json.id),
    `each is accepted: ${started.map((r) => r.status)}`,
  );
  const ids = started.map((r) => r.json.id as string);
  const promptOf = new Map(ids.map((id, i) => [id, prompts[i]!]));
  const views = await Promise.all(
    ids.map((id) =>
      waitUntil(
        async () => {
          const view = (await mesh.get(`/invocations/${id}`)).json;
          return ['succeeded', 'failed', 'cancelled'].includes(view.status) ? view : undefined;
        },
        60_000,
        () => `${promptOf.get(id)} to end`,
      ),
    ),
  );
  const session = (await mesh.get('/sessions/race')).json;
  t.same([...session.invocations].sort(), [...ids].sort(), 'the session lists each one, once');
  // The order in which they were bound: each interrupts the one bound before it.
  const order: string[] = session.invocations;
  const viewOf = new Map(views.map((v) => [v.id as string, v]));
  const last = order.at(-1)!;
  t.equal(viewOf.get(last).status, 'succeeded', 'the last one bound runs to its end');
  t.equal(viewOf.get(last).output, `answer to ${promptOf.get(last)}`);
  for (const id of order.slice(0, -1)) {
    t.equal(viewOf.get(id).status, 'cancelled', `${promptOf.get(id)}: interrupted by a later one`);
    t.equal(viewOf.get(id).error?.code, 'cancelled');
  }

  // No two runs of the session overlap: a run spans its view's startedAt..finishedAt, and each
  // model call lies within its own invocation's run.
  const runs = views
    .filter((v) => v.startedAt)
    .map((v) => ({ id: v.id, from: Date.parse(v.startedAt), to: Date.parse(v.finishedAt) }))
    .sort((x, y) => x.from - y.from);
  for (let i = 1; i < runs.length; i++) {
    t.ok(runs[i]!.from >= runs[i - 1]!.to, `run ${i} starts after run ${i - 1} ended`);
  }
  // A model call spans arrivedAt..doneAt; one aborted by the cancel ends by its run's end.
  const requests = mesh.model.of('chat');
  const calls = requests.map((r) => {
    const run = runs.find((x) => x.id === ids[prompts.indexOf(lastUser(r))]);
    t.ok(run && r.arrivedAt >= run.from, `the model call of ${lastUser(r)} lies within its run`);
    if (!r.aborted)
      t.ok(run && r.doneAt! <= run.to, `the answer to ${lastUser(r)} came before its run ended`);
    return { from: r.arrivedAt, to: r.aborted ? (run?.to ?? Infinity) : r.doneAt! };
  });
  for (let i = 1; i < calls.length; i++) {
    t.ok(calls[i]!.from >= calls[i - 1]!.to, `model call ${i} starts after call ${i - 1} ended`);
  }
  const winnerCall = requests.filter((r) => !r.aborted);
  t.equal(winnerCall.length, 1, 'one model call was answered: the winner');
  t.same(
    roles(winnerCall[0]!),
    ['system:@agent chat', `user:${promptOf.get(last)}`],
    'cancelled turns add nothing to the history the winner sees',
  );
  t.same(session.messages, [
    { role: 'user', content: promptOf.get(last), invocationId: last },
    { role: 'assistant', content: `answer to ${promptOf.get(last)}`, invocationId: last },
  ]);
  t.same(await mesh.client.lrange('mesh:{session:race}:queue', 0, -1), [], 'nothing is left waiting');
  t.equal(await mesh.client.hget('mesh:{session:race}:meta', 'current'), '', 'the session is idle');
});
