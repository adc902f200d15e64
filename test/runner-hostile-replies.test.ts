// A hostile model against a whole mesh (docs/reference/bounds.md, issue 7 defects 2, 5 and 8): no reply stalls
// the runner's event loop (runners run in this process), an oversized reply fails the call and is
// not stored, calls past the per-reply cap fail as tool messages, invented names stay out of
// metric labels.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

t.test(
  'the fenced-newlines answer of issue 7 does not stall the runner, and the retry succeeds',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `
  typed:
    instructions: "@agent typed"
    output: {type: object, properties: {ok: {type: boolean}}, required: [ok]}
`,
      script: (r) =>
        turnOf(r) === 0 ? { final: `\`\`\`\n${'\n'.repeat(3000)}x` } : { final: '{"ok": true}' },
    });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const res = await mesh.invoke('typed', { prompt: 'go' });
    delay.disable();
    t.match(res.json, { status: 'succeeded', output: { ok: true } });
    // A generous bound, far from the ~8 s the backtracking regex blocked for.
    t.ok(
      delay.max < 1e9,
      `the event loop never stalled for a second (max ${Math.round(delay.max / 1e6)} ms)`,
    );
    const requests = mesh.model.of('typed');
    t.equal(requests.length, 2, 'one model call per answer: no lock lapse sent one twice');
    t.match(requests[1]!.messages.at(-1), {
      role: 'user',
      content: /^The final response is not valid JSON \(/,
    });
  },
);

t.test('a 5 MiB model reply fails the invocation with invalid_model_reply and is not stored', async (t) => {
  const huge = 'x'.repeat(5 * 1024 * 1024);
  const mesh = await startMesh(t, {
    agentsYaml: `
  solo: {instructions: "@agent solo"}
`,
    script: () => ({ final: huge }),
  });
  const res = await mesh.invoke('solo', { prompt: 'go' });
  t.match(res.json, {
    status: 'failed',
    error: { code: 'invalid_model_reply', message: 'The model reply exceeds 4194304 bytes.' },
  });
  t.equal(mesh.model.requests.length, 1, 'not retried: the same prompt would bring the same reply');
  const keys = keyLayout(mesh.prefix);
  const stored = await mesh.client.hgetall(keys.calls(res.json.id, res.json.id));
  t.ok(JSON.stringify(stored).length < 10_000, 'no part of the reply body is in Redis');
});

t.test('a reply with 2000 tool calls runs 64 of them; the rest come back as too_many_calls', async (t) => {
  let runs = 0;
  const mesh = await startMesh(t, {
    tools: [
      {
        name: 'clock',
        description: 'Time.',
        input: { type: 'object', properties: {} },
        run: () => {
          runs++;
          return 'noon';
        },
      },
    ],
    agentsYaml: `
  boss: {instructions: "@agent boss", tools: [clock]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? {
            calls: Array.from({ length: 2000 }, (_, i) => ({
              name: i < 2 ? `invented_${i}` : i % 50 === 49 ? '_subagent_ghost' : 'clock',
            })),
          }
        : { final: 'done' },
  });
  const res = await mesh.invoke('boss', { prompt: 'go' });
  t.match(res.json, { status: 'succeeded', output: 'done' });
  t.equal(runs, 61, 'the tool ran for the declared calls among the first 64 only');
  const messages = toolMessagesOf(mesh.model.requests[1]!);
  t.equal(messages.length, 2000, 'every call is answered in the next request');
  t.strictSame(
    messages.slice(0, 3).map((m) => m.content),
    ['Tool invented_0 does not exist.', 'Tool invented_1 does not exist.', 'noon'],
  );
  t.equal(
    messages[49]!.content,
    'Sub-agent _subagent_ghost execute failed: Sub-agent ghost is not a declared sub-agent of boss.',
  );
  const capped = 'At most 64 calls are allowed in one model reply.';
  t.equal(messages[64]!.content, `Tool clock execute failed: ${capped}`);
  t.equal(messages[199]!.content, `Sub-agent _subagent_ghost execute failed: ${capped}`);
  t.equal(messages.filter((m) => m.content?.endsWith(capped)).length, 1936);
  const metrics = await mesh.runners[0]!.metrics.registry.metrics();
  t.match(metrics, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 61/);
  t.match(metrics, /mesh_tool_calls_total\{agent="boss",tool="unknown",outcome="failed"\} 2/);
  t.notMatch(metrics, /invented|ghost/, 'no invented name becomes a label');
});
