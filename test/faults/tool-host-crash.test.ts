// The tool-host SIGKILLed while a tool runs: the runner repeats the call with the same
// Idempotency-Key against a restarted tool-host, which finds the key started with its lease
// expired. A tool that is not idempotent is not run again (the model is told the call is in
// doubt); an idempotent one runs again. Counted by the tool's own side-effect log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { toolMessagesOf, turnOf } from '../support/fake-model.js';
import { startMesh, startService } from '../support/mesh.js';
import { waitUntil } from '../support/wait-until.js';

const toolsModule = path.resolve(import.meta.dirname, 'fixtures/side-effect-tools.mjs');

for (const [tool, expected] of [
  ['charge', { runs: 1, message: /^Tool charge execute failed: The call may or may not have taken effect/ }],
  ['reindex', { runs: 2, message: /^reindex done$/ }],
] as const) {
  t.test(
    `a tool-host killed mid-call: ${tool} (${expected.runs === 1 ? 'not idempotent' : 'idempotent'})`,
    async (t) => {
      const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-effects-')), 'effects.log');
      fs.writeFileSync(log, '');
      const mesh = await startMesh(t, {
        toolsModule,
        toolHostEnv: { SIDE_EFFECT_LOG: log },
        agentsYaml: `
  agent: {instructions: "@agent agent", tools: [${tool}]}
`,
        script: (r) =>
          turnOf(r) === 0
            ? { calls: [{ name: tool, args: {} }] }
            : { final: toolMessagesOf(r)[0]!.content ?? '' },
      });
      const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
      await waitUntil(
        async () => fs.readFileSync(log, 'utf8').length > 0,
        30_000,
        () => 'the tool to start',
      );
      process.kill(-mesh.toolHostProcess!.proc.pid!, 'SIGKILL');
      await mesh.toolHostProcess!.exited;
      startService(t, 'tool-host', mesh.toolHostProcessEnv!);
      const done = await mesh.waitForStatus(
        started.json.id,
        'succeeded',
        60_000,
        () => 'the invocation to finish',
      );
      t.match(done.output, expected.message, 'what the model was told');
      const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
      t.equal(lines.length, expected.runs, `the side effect happened ${expected.runs} time(s)`);
      t.equal(new Set(lines).size, 1, 'every run carried the same Idempotency-Key');
      t.same(mesh.model.requests.map(turnOf), [0, 1], 'each model call ran once');
    },
  );
}
