// What the tool-host keeps of a result is what the invocation keeps (issue 24, items 6 and 10): a
// 9 MB result was stored whole in its outcome record for 7 days. Now the outcome, like the answer,
// holds the tool message cut at MESH_MAX_RESULT_BYTES with its visible marker; a result too deep
// to be JSON is refused naming the tool, not "Sub-agent result".
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const keys = keyLayout('mesh');
const nested = (depth: number) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

const tool = (name: string, run: () => unknown) => ({
  name,
  description: `Returns ${name}.`,
  input: { type: 'object' },
  run,
});

// The agent calls the tool its prompt names, then answers with the tool message it got.
const script: FakeScript = (r) => {
  if (turnOf(r) === 0) return { calls: [{ name: r.messages.at(-1)!.content!, args: {} }] };
  return { final: toolMessagesOf(r)[0]?.content ?? '' };
};

const mesh = await startMesh(t, {
  script,
  tools: [
    tool('huge_text', () => 'x'.repeat(9 * 1024 * 1024)),
    tool('huge_object', () => ({ rows: Array.from({ length: 200_000 }, (_, i) => ({ i, v: 'value' })) })),
    tool('small', () => ({ ok: true })),
    tool('deep', () => nested(3000)),
    tool('deeper', () => nested(20_000)),
  ],
  agentsYaml: `
  caller: {instructions: "@agent caller", tools: [huge_text, huge_object, small, deep, deeper]}
`,
});

/** Runs the tool named `name` through an invocation; the tool message and its outcome record's bytes. */
async function call(name: string) {
  const view = (await mesh.invoke('caller', { prompt: name }, 'wait=60')).json;
  const callId = view.calls.find((c: any) => c.kind === 'tool').callId;
  const key = keys.toolOutcome(`${view.id}/${callId}`);
  return {
    message: view.output as string,
    outcomeBytes: await mesh.client.hstrlen(key, 'outcome'),
    memory: Number(await mesh.client.call('MEMORY', 'USAGE', key)),
  };
}

t.test('a 9 MB text result is kept as the invocation keeps it: 64 KiB with the marker', async (t) => {
  const { message, outcomeBytes, memory } = await call('huge_text');
  t.equal(Buffer.byteLength(message), 64 * 1024, 'the tool message is cut at MESH_MAX_RESULT_BYTES');
  t.match(message, /…\[truncated: 9437184 bytes total, showing the first \d+\]$/);
  t.ok(outcomeBytes < 70 * 1024, `the outcome record holds ${outcomeBytes} bytes`);
  t.ok(memory < 100 * 1024, `the outcome key takes ${memory} bytes of Redis`);
});

t.test('a large object result is cut as its compact JSON, the same text the model gets', async (t) => {
  const { message, outcomeBytes } = await call('huge_object');
  t.ok(message.startsWith('{"rows":[{"i":0,"v":"value"},'), 'its JSON text, cut');
  t.match(message, /…\[truncated: \d+ bytes total, showing the first \d+\]$/);
  // Kept as a JSON string: its quotes are escaped, the rest is the 64 KiB the invocation keeps.
  t.ok(outcomeBytes < 2 * 64 * 1024, `the outcome record holds ${outcomeBytes} bytes`);
});

t.test('a result that fits is answered and kept as it is', async (t) => {
  const { message, outcomeBytes } = await call('small');
  t.equal(message, '{"ok":true}');
  t.ok(outcomeBytes > 0 && outcomeBytes < 100);
});

t.test('a result too deeply nested is refused naming the tool, wherever it is found', async (t) => {
  // 3,000 levels pass JSON.stringify on the tool-host and overflow the runner's walk; 20,000 do not
  // even leave the tool-host.
  for (const name of ['deep', 'deeper']) {
    const { message } = await call(name);
    t.equal(
      message,
      `Tool ${name} execute failed: Tool ${name} result is cyclic or too deeply nested to normalize as JSON`,
    );
  }
});
