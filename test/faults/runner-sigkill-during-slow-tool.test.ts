// A runner SIGKILLed while a slow tool that is not safe to repeat runs; the tool-host (a process
// of its own) stays alive. The tool runs to its end and the tool-host records its outcome; the
// runner that takes the job over re-issues the call with the same Idempotency-Key, waits on the
// lease while the tool still runs, and gets the real result (docs/reference/bounds.md): the tool ran once and
// the model saw what it did, not `tool_in_doubt`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

const toolsModule = path.resolve(import.meta.dirname, 'fixtures/slow-transfer-tools.mjs');

t.test(
  'a runner killed during a slow tool: the tool ran once and the model saw its real result',
  async (t) => {
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-effects-')), 'effects.log');
    fs.writeFileSync(log, '');
    t.teardown(() => fs.rmSync(path.dirname(log), { recursive: true, force: true }));
    const mesh = await startMesh(t, {
      runners: 0,
      toolsModule,
      toolHostEnv: { SIDE_EFFECT_LOG: log },
      agentsYaml: `
  agent: {instructions: "@agent agent", tools: [transfer]}
`,
      script: (r) =>
        turnOf(r) === 0
          ? { calls: [{ name: 'transfer', args: { amount: 5 } }] }
          : { final: toolMessagesOf(r)[0]!.content ?? '' },
    });
    const keys = keyLayout(mesh.prefix);
    for (let i = 0; i < 2; i++) startService(t, 'runner', mesh.env);
    await waitUntil(
      async () => (await mesh.client.zcount(keys.agentRunners('agent'), Date.now(), '+inf')) === 2,
      60_000,
      () => 'two runners',
    );
    const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
    const id: string = started.json.id;
    const toolRecord = async () => {
      const records = Object.values(await mesh.client.hgetall(keys.calls(rootOf(id), id))).map((v) =>
        JSON.parse(v),
      );
      return records.find((r) => r.kind === 'tool');
    };
    await waitUntil(
      async () => fs.readFileSync(log, 'utf8').length > 0,
      30_000,
      () => 'the tool to start',
    );
    const killed = (await toolRecord()).runner as string;
    process.kill(runnerPid(killed), 'SIGKILL');
    // The runner that takes over records the call `started` again just before it re-issues it.
    const reissued = await waitUntil(
      async () => {
        const r = await toolRecord();
        return r.runner !== killed ? r : undefined;
      },
      60_000,
      () => 'the other runner to re-issue the call',
    );
    t.equal(reissued.status, 'started', 'the call was re-issued while the tool still ran');
    t.equal(reissued.attempt, 2, 'recorded as its second attempt');
    fs.writeFileSync(`${log}.release`, '');
    const done = await mesh.waitForStatus(id, 'succeeded', 60_000, () => 'the invocation to finish');
    t.equal(done.output, 'transferred 5', "the model's answer is the tool's real result");
    const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
    t.strictSame(lines, [`${id}/${reissued.callId}`], 'the tool ran exactly once, under the call key');
    t.same(mesh.model.requests.map(turnOf), [0, 1], 'each model call ran once');
    const toolMessages = toolMessagesOf(mesh.model.requests[1]!);
    t.equal(toolMessages.length, 1);
    t.equal(toolMessages[0]!.content, 'transferred 5', 'the model saw the result, not tool_in_doubt');
    const call = done.calls.find((c: { kind: string }) => c.kind === 'tool');
    t.equal(call.status, 'succeeded');
    t.not(call.runner, killed, 'the call was recorded by the runner that took over');
    t.equal(call.attempt, 2, 'the view marks the call as re-run after a crash (docs/guides/console.md)');
    t.equal(
      done.calls.find((c: { kind: string }) => c.kind === 'model').attempt,
      undefined,
      'not the others',
    );
    const detail = await mesh.get(`/invocations/${id}/calls/${call.callId}`);
    t.match(detail.json, { attempt: 2, status: 'succeeded', request: { arguments: { amount: 5 } } });
  },
);
