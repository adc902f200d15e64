// A runner SIGKILLed right after a tool call returned but before its outcome was recorded. Each
// runner process reaches Redis through its own TCP proxy; the tool freezes the proxies before it
// returns, so the runner receives the result but cannot record it, and is killed in that window.
// The runner that takes over re-issues the call with the same Idempotency-Key and the tool-host
// answers from the recorded outcome: the side effect happened once.
import { keyLayout, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { runnerPid } from '../support/runner-pid.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitUntil } from '../support/wait-until.js';

t.test('a runner killed after a tool returned and before its record: the tool ran once', async (t) => {
  const proxies: TcpProxy[] = [];
  const effects: string[] = [];
  let killedAt = 0;
  let killedRunner = '';
  let mesh: Awaited<ReturnType<typeof startMesh>>;
  const pay = {
    name: 'pay',
    description: 'Pays once.',
    input: { type: 'object', properties: {} },
    run: async (_args: unknown, ctx: { invocationId: string; callId: string; idempotencyKey: string }) => {
      effects.push(ctx.idempotencyKey);
      if (effects.length > 1) return 'paid again';
      const keys = keyLayout(mesh.prefix);
      const started = JSON.parse(
        (await mesh.client.hget(keys.calls(rootOf(ctx.invocationId), ctx.invocationId), ctx.callId))!,
      );
      for (const p of proxies) p.hold();
      setTimeout(() => {
        killedAt = Date.now();
        killedRunner = started.runner;
        process.kill(runnerPid(started.runner), 'SIGKILL');
        setTimeout(() => {
          for (const p of proxies) p.release();
        }, 200);
      }, 300);
      return 'paid';
    },
  };
  mesh = await startMesh(t, {
    runners: 0,
    tools: [pay],
    agentsYaml: `
  agent: {instructions: "@agent agent", tools: [pay]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? { calls: [{ name: 'pay', args: {} }] }
        : { final: toolMessagesOf(r)[0]!.content ?? '' },
  });
  for (let i = 0; i < 2; i++) {
    const proxy = await startTcpProxy(mesh.redis.port);
    t.teardown(() => proxy.close());
    proxies.push(proxy);
    startService(t, 'runner', { ...mesh.env, REDIS_URL: proxy.url });
  }
  await waitUntil(
    async () =>
      (await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('agent'), Date.now(), '+inf')) === 2,
    60_000,
    () => 'two runners',
  );
  const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
  const done = await mesh.waitForStatus(
    started.json.id,
    'succeeded',
    60_000,
    () => 'the invocation to finish elsewhere',
  );
  t.ok(killedAt > 0, 'the runner was killed in the window');
  t.equal(done.output, 'paid', "the recovered runner read the first run's outcome");
  t.equal(effects.length, 1, 'the side effect happened once');
  t.same(mesh.model.requests.map(turnOf), [0, 1], 'the recorded model call was replayed, not re-issued');
  const call = done.calls.find((c: any) => c.kind === 'tool');
  t.not(call.runner, killedRunner, 'the tool call was recorded by the runner that took over');
});
