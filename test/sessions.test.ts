// Sessions (docs/guides/sessions.md) through a whole mesh: a session's history, its validation,
// ownership and deletion, the multitask modes (enqueue, reject, interrupt) one invoke at a time and
// fired at once, idempotency, code agents and A2A contexts. Each former file's tests are one heading
// subtest below, starting and stopping their own meshes, their helpers inside it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import t from 'tap';
import { a2aSend } from './support/a2a-message.js';
import type { SeenRequest } from './support/fake-model.js';
import { listen, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

const chat = '  chat: {description: Chats., instructions: "@agent chat"}\n';
const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;
const roles = (r: SeenRequest) => r.messages.map((m) => `${m.role}:${m.content}`);

// ---------------------------------------------------------------------------------------------------
// A session's turns, one invoke at a time: the history each turn sees, what a failed or cancelled
// turn adds, ids and ownership, GET and DELETE, the multitask modes, Idempotency-Key, a code
// agent's ctx.session, a healed advance and A2A's contextId.
t.test("a session's turns: history, validation, ownership, multitask modes, code agents, A2A", async (t) => {
  const other = '  other: {description: Another., instructions: "@agent other"}\n';
  const answerTo = (r: SeenRequest) => ({ final: `answer to ${lastUser(r)}` });

  t.test("a session's third turn sees the first two exchanges, oldest first", async (t) => {
    const mesh = await startMesh(t, { agentsYaml: chat + other, script: answerTo });
    const ids: string[] = [];
    for (const prompt of ['one', 'two', 'three']) {
      const res = await mesh.invoke('chat', { prompt }, 'wait=30&session=conv-1');
      t.equal(res.status, 200, JSON.stringify(res.json));
      t.equal(res.json.output, `answer to ${prompt}`);
      ids.push(res.json.id);
    }
    t.same(roles(mesh.model.requests[2]!), [
      'system:@agent chat',
      'user:one',
      'assistant:answer to one',
      'user:two',
      'assistant:answer to two',
      'user:three',
    ]);
    t.same(
      roles(mesh.model.requests[0]!),
      ['system:@agent chat', 'user:one'],
      'the first turn has no history',
    );
    const session = await mesh.get('/sessions/conv-1');
    t.equal(session.status, 200);
    t.match(session.json, { id: 'conv-1', agent: 'chat', invocations: ids });
    t.same(session.json.messages, [
      { role: 'user', content: 'one', invocationId: ids[0] },
      { role: 'assistant', content: 'answer to one', invocationId: ids[0] },
      { role: 'user', content: 'two', invocationId: ids[1] },
      { role: 'assistant', content: 'answer to two', invocationId: ids[1] },
      { role: 'user', content: 'three', invocationId: ids[2] },
      { role: 'assistant', content: 'answer to three', invocationId: ids[2] },
    ]);
    t.ok(Date.parse(session.json.updatedAt) >= Date.parse(session.json.createdAt));
    const ttl = await mesh.client.ttl('mesh:{session:conv-1}:meta');
    t.ok(ttl > 29 * 24 * 3600, `the session lives 30 days after its last use (ttl ${ttl})`);

    // Another invocation without the session sees nothing of it.
    const alone = await mesh.invoke('chat', { prompt: 'alone' });
    t.same(roles(mesh.model.requests.at(-1)!), ['system:@agent chat', 'user:alone']);
    t.equal(alone.status, 200);
  });

  t.test('a failed turn adds nothing; the session goes on', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: (r) => (lastUser(r) === 'break' ? { status: 400 } : answerTo(r)),
    });
    const first = await mesh.invoke('chat', { prompt: 'hello' }, 'session=s-fail');
    const failed = await mesh.invoke('chat', { prompt: 'break' }, 'session=s-fail');
    t.equal(failed.json.status, 'failed');
    const third = await mesh.invoke('chat', { prompt: 'again' }, 'session=s-fail');
    t.equal(third.json.status, 'succeeded');
    t.same(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:hello',
      'assistant:answer to hello',
      'user:again',
    ]);
    const session = await mesh.get('/sessions/s-fail');
    t.same(
      session.json.invocations,
      [first.json.id, failed.json.id, third.json.id],
      'every invocation is listed',
    );
    t.same(
      session.json.messages.map((m: { invocationId: string }) => m.invocationId),
      [first.json.id, first.json.id, third.json.id, third.json.id],
      'messages come from succeeded ones only',
    );
  });

  t.test('a session belongs to its agent; ids and multitask are validated', async (t) => {
    const mesh = await startMesh(t, { agentsYaml: chat + other, script: answerTo });
    await mesh.invoke('chat', { prompt: 'hi' }, 'session=mine');
    const conflict = await mesh.invoke('other', { prompt: 'hi' }, 'session=mine');
    t.equal(conflict.status, 409);
    t.equal(conflict.json.error.code, 'session_conflict');
    for (const query of ['session=has%20space', `session=${'x'.repeat(129)}`, 'session=a.b', 'session=']) {
      const bad = await mesh.invoke('chat', { prompt: 'hi' }, query);
      t.equal(bad.status, 400, query);
      t.equal(bad.json.error.code, 'invalid_input', query);
      t.match(
        JSON.stringify(bad.json.error.details),
        /session/,
        `${query}: the path names the query parameter`,
      );
    }
    const badMode = await mesh.invoke('chat', { prompt: 'hi' }, 'session=mine&multitask=later');
    t.equal(badMode.status, 400);
    t.match(JSON.stringify(badMode.json.error.details), /multitask/);
    t.equal((await mesh.get('/sessions/nope')).json.error.code, 'session_not_found');
    t.equal((await mesh.get('/sessions/bad.id')).status, 400);
  });

  t.test('GET and DELETE: deleting frees the id, history and binding gone', async (t) => {
    const mesh = await startMesh(t, { agentsYaml: chat + other, script: answerTo });
    await mesh.invoke('chat', { prompt: 'remember me' }, 'session=gone');
    t.equal((await mesh.get('/sessions/gone')).json.messages.length, 2);
    const del = await mesh.request('DELETE', '/sessions/gone');
    t.equal(del.status, 204);
    t.equal((await mesh.get('/sessions/gone')).status, 404);
    t.equal((await mesh.request('DELETE', '/sessions/gone')).status, 404);
    t.same(await mesh.client.keys('mesh:{session:gone}:*'), [], 'no key of it is left');
    const again = await mesh.invoke('other', { prompt: 'fresh' }, 'session=gone');
    t.equal(again.status, 200, 'another agent may take the free id');
    t.same(roles(mesh.model.requests.at(-1)!), ['system:@agent other', 'user:fresh'], 'no history is left');
  });

  t.test("another API key sees no session of this one's; auth off, sessions belong to no key", async (t) => {
    const alpha = { authorization: 'Bearer alpha-key-1' };
    const beta = { authorization: 'Bearer beta-key-2' };
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: answerTo,
      apiKeys: 'alpha-key-1, beta-key-2',
      headers: alpha,
    });
    const first = await mesh.invoke('chat', { prompt: 'secret' }, 'session=private');
    t.equal(first.status, 200);
    const stolen = await mesh.invoke('chat', { prompt: 'tell me' }, 'session=private', beta);
    t.equal(stolen.status, 404);
    t.equal(stolen.json.error.code, 'session_not_found');
    t.equal((await mesh.get('/sessions/private', beta)).status, 404);
    t.equal((await mesh.request('DELETE', '/sessions/private', { headers: beta })).status, 404);
    t.equal((await mesh.get('/sessions/private', alpha)).status, 200, 'the owner still has it');
    t.equal(mesh.model.requests.length, 1, 'nothing ran for the other key');
  });

  t.test('enqueue: concurrent invokes run one at a time, each seeing the answers before it', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      runners: 2,
      script: (r) => ({ ...answerTo(r), latencyMs: 150 }),
    });
    const started = await Promise.all(
      ['a', 'b', 'c', 'd'].map((prompt) => mesh.invoke('chat', { prompt }, 'wait=0&session=line')),
    );
    t.same(
      started.map((r) => r.status),
      [202, 202, 202, 202],
    );
    t.ok(
      started.filter((r) => r.json.status === 'queued').length >= 3,
      'those behind the running one exist at once, queued',
    );
    const views = await Promise.all(started.map((r) => mesh.waitForStatus(r.json.id, 'succeeded')));
    const requests = mesh.model.of('chat');
    t.equal(requests.length, 4);
    for (let i = 1; i < requests.length; i++) {
      t.ok(
        requests[i]!.arrivedAt >= requests[i - 1]!.doneAt!,
        `model call ${i} starts after call ${i - 1} ended`,
      );
      t.equal(requests[i]!.messages.length, 2 + 2 * i, `call ${i} carries the ${i} exchanges before it`);
    }
    const byStart = [...views].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
    for (let i = 1; i < byStart.length; i++) {
      t.ok(Date.parse(byStart[i].startedAt) >= Date.parse(byStart[i - 1].finishedAt), 'runs do not overlap');
    }
    const session = await mesh.get('/sessions/line');
    t.equal(session.json.messages.length, 8);
    t.same(
      session.json.invocations,
      started
        .map((r) => r.json.id)
        .sort((x, y) => session.json.invocations.indexOf(x) - session.json.invocations.indexOf(y)),
    );
  });

  t.test('reject: a second invoke while one runs is 409 session_busy', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: (r) => ({ ...answerTo(r), latencyMs: lastUser(r) === 'slow' ? 1000 : 0 }),
    });
    const first = await mesh.invoke('chat', { prompt: 'slow' }, 'wait=0&session=busy');
    const second = await mesh.invoke('chat', { prompt: 'now' }, 'wait=0&session=busy&multitask=reject');
    t.equal(second.status, 409);
    t.equal(second.json.error.code, 'session_busy');
    await mesh.waitForStatus(first.json.id, 'succeeded');
    const third = await mesh.invoke('chat', { prompt: 'after' }, 'session=busy&multitask=reject');
    t.equal(third.status, 200, 'once it ended, reject lets the next one run');
    t.equal(mesh.model.of('chat').length, 2);
    t.same((await mesh.get('/sessions/busy')).json.invocations, [first.json.id, third.json.id]);
  });

  t.test('interrupt: the running one is cancelled, the new one starts once it has ended', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: (r) => ({ ...answerTo(r), latencyMs: lastUser(r) === 'long' ? 30_000 : 0 }),
    });
    const first = await mesh.invoke('chat', { prompt: 'long' }, 'wait=0&session=talk');
    await waitUntil(
      async () => mesh.model.requests.length === 1,
      10_000,
      () => 'the first model call',
    );
    const second = await mesh.invoke(
      'chat',
      { prompt: 'instead' },
      'wait=30&session=talk&multitask=interrupt',
    );
    t.equal(second.status, 200, JSON.stringify(second.json));
    t.equal(second.json.output, 'answer to instead');
    const cancelled = await mesh.waitForStatus(first.json.id, 'cancelled');
    t.ok(Date.parse(second.json.startedAt) >= Date.parse(cancelled.finishedAt), 'the new one starts after');
    t.same(
      roles(mesh.model.requests[1]!),
      ['system:@agent chat', 'user:instead'],
      'a cancelled turn adds nothing',
    );
  });

  t.test(
    'a session invocation cancelled while it waits its turn never runs; the queue goes on',
    async (t) => {
      const mesh = await startMesh(t, {
        agentsYaml: chat,
        script: (r) => ({ ...answerTo(r), latencyMs: lastUser(r) === 'first' ? 800 : 0 }),
      });
      const first = await mesh.invoke('chat', { prompt: 'first' }, 'wait=0&session=q');
      const second = await mesh.invoke('chat', { prompt: 'second' }, 'wait=0&session=q');
      const third = await mesh.invoke('chat', { prompt: 'third' }, 'wait=0&session=q');
      const del = await mesh.request('DELETE', `/invocations/${second.json.id}`);
      t.equal(del.status, 202);
      await mesh.waitForStatus(second.json.id, 'cancelled', 5000);
      const done = await mesh.waitForStatus(third.json.id, 'succeeded');
      t.equal(done.output, 'answer to third');
      t.same(
        mesh.model.requests.map(lastUser),
        ['first', 'third'],
        'the cancelled one never reached the model',
      );
      t.equal((await mesh.get(`/invocations/${first.json.id}`)).json.status, 'succeeded');
    },
  );

  t.test('the same Idempotency-Key with a session answers the same invocation, enqueued once', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: chat,
      script: (r) => ({ ...answerTo(r), latencyMs: 200 }),
    });
    const headers = { 'idempotency-key': 'once-only' };
    const [a, b] = await Promise.all([
      mesh.invoke('chat', { prompt: 'x' }, 'wait=30&session=idem', headers),
      mesh.invoke('chat', { prompt: 'x' }, 'wait=30&session=idem', headers),
    ]);
    t.equal(a.json.id, b.json.id);
    const c = await mesh.invoke('chat', { prompt: 'x' }, 'wait=30&session=idem', headers);
    t.equal(c.json.id, a.json.id);
    t.same((await mesh.get('/sessions/idem')).json.invocations, [a.json.id]);
    t.equal(mesh.model.requests.length, 1);
  });

  t.test('a code agent reads the session as ctx.session, frozen', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'session-agent-'));
    const module = path.join(dir, 'session-agent.mjs');
    fs.writeFileSync(
      module,
      `export default {
  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: async (input, ctx) => {
    let writable = true;
    try { ctx.session.messages.push({}); } catch { writable = false; }
    return { text: input.text, session: ctx.session ?? null, frozen: Object.isFrozen(ctx.session) && !writable };
  },
};
`,
    );
    const mesh = await startMesh(t, { agentsYaml: `  coder: {module: '${module}'}\n` });
    const first = await mesh.invoke('coder', { text: 'one' }, 'session=code');
    t.same(first.json.output, { text: 'one', session: { id: 'code', messages: [] }, frozen: true });
    const second = await mesh.invoke('coder', { text: 'two' }, 'session=code');
    t.equal(second.json.status, 'succeeded', JSON.stringify(second.json.error));
    t.same(second.json.output.session, {
      id: 'code',
      messages: [
        { role: 'user', content: '{"text":"one"}', invocationId: first.json.id },
        { role: 'assistant', content: JSON.stringify(first.json.output), invocationId: first.json.id },
      ],
    });
    const plain = await mesh.invoke('coder', { text: 'alone' });
    t.equal(plain.json.output.session, null, 'no session, no ctx.session');
  });

  t.test('an advance left undone after the finish (a runner killed between them) is healed', async (t) => {
    const mesh = await startMesh(t, { agentsYaml: chat, script: answerTo });
    const first = await mesh.invoke('chat', { prompt: 'kept' }, 'session=heal');
    t.equal(first.status, 200);
    const advanced = () =>
      waitUntil(
        async () => (await mesh.client.hget('mesh:{session:heal}:meta', 'current')) === '',
        10_000,
        () => "the runner's advance",
      );
    await advanced();
    // What a runner SIGKILLed right after the FINISH step leaves: the invocation succeeded, the
    // session still names it current and has not got its exchange.
    await mesh.client.hset('mesh:{session:heal}:meta', 'current', first.json.id);
    await mesh.client.del('mesh:{session:heal}:messages');
    const second = await mesh.invoke('chat', { prompt: 'next' }, 'wait=30&session=heal&multitask=reject');
    t.equal(second.status, 200, 'the session is not taken as busy');
    t.same(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:kept',
      'assistant:answer to kept',
      'user:next',
    ]);
    // The same state read back through GET is settled by the read too.
    await advanced();
    await mesh.client.hset('mesh:{session:heal}:meta', 'current', second.json.id);
    await mesh.client.rpop('mesh:{session:heal}:messages', 2);
    const session = await mesh.get('/sessions/heal');
    t.equal(session.json.messages.length, 4, 'the exchange is appended exactly once');
    t.equal((await mesh.get('/sessions/heal')).json.messages.length, 4);
  });

  t.test("an A2A message's contextId is the session", async (t) => {
    const mesh = await startMesh(t, { agentsYaml: chat, script: answerTo });
    const base = await listen(mesh);
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({})] }).createFromUrl(
      `${base}/a2a/chat/.well-known/agent-card.json`,
      '',
    );
    const send = (text: string, contextId: string) => a2aSend(text, { contextId });
    const first = (await client.sendMessage(send('hello there', 'a2a-conv'))) as Task;
    t.equal(first.status?.state, TaskState.TASK_STATE_COMPLETED);
    t.equal(first.contextId, 'a2a-conv');
    const second = (await client.sendMessage(send('and again', 'a2a-conv'))) as Task;
    t.equal(second.contextId, 'a2a-conv');
    t.same(roles(mesh.model.requests.at(-1)!), [
      'system:@agent chat',
      'user:hello there',
      'assistant:answer to hello there',
      'user:and again',
    ]);
    t.same((await mesh.get('/sessions/a2a-conv')).json.invocations, [first.id, second.id]);
    const read = (await client.getTask({ tenant: '', id: second.id, historyLength: undefined })) as Task;
    t.equal(read.contextId, 'a2a-conv', 'GetTask answers the task in its context');
    const alone = (await client.sendMessage(send('no context', ''))) as Task;
    t.same(
      roles(mesh.model.requests.at(-1)!),
      ['system:@agent chat', 'user:no context'],
      'no contextId, no session',
    );
    t.equal((await mesh.get(`/invocations/${alone.id}`)).json.status, 'succeeded');
    await t.rejects(client.sendMessage(send('bad', 'not a session id')), /invalid_input/);
  });
});

// ---------------------------------------------------------------------------------------------------
// Sessions (docs/guides/sessions.md) under truly concurrent invokes: `reject` and `interrupt` requests fired at
// the same moment at one session, served by two runners, never run two invocations of it at once.
t.test('reject and interrupt invokes fired at once at one session never run two of it at once', async (t) => {
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
});
