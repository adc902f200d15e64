// A model call's first piece goes out at once, as a delta of its own, so a watcher sees the reply
// begin without waiting MESH_DELTA_FLUSH_MS; the pieces after it are coalesced as before, and a
// retried attempt's first piece goes out at once again (docs/guides/streaming.md).
import t, { type Test } from 'tap';
import { brokenAttempt, isFirstAttempt } from './support/broken-stream.js';
import type { FakeScript } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { openSse, type SseEvent } from './support/sse.js';

const PIECES = 40;
const ANSWER = Array.from({ length: PIECES }, (_, i) => `p${String(i).padStart(2, '0')} `).join('');
const FIRST = ANSWER.slice(0, ANSWER.length / PIECES); // the fake model cuts the text evenly

// Every piece of an answer comes in one write: all of them arrive within one flush window.
const script: FakeScript = (r) => {
  // The first attempt breaks off mid-stream (retried like a 5xx) after two pieces of its own.
  if (r.agent === 'flaky' && isFirstAttempt(mesh.model, r)) return brokenAttempt(100);
  return { final: ANSWER, chunks: PIECES };
};

const mesh = await startMesh(t, {
  agentsYaml: `
  opener: {instructions: "@agent opener"}
  flaky: {instructions: "@agent flaky"}
`,
  script,
});
await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.gateway.app.server.address() as { port: number }).port}`;

/** The delta events an invoke stream of `agent` carried, once it ended. */
async function deltasOf(t: Test, agent: string): Promise<SseEvent['data'][]> {
  const s = await openSse(`${base}/agents/${agent}/invoke?stream=true`, {
    method: 'POST',
    body: { prompt: 'go' },
  });
  t.teardown(() => s.close());
  await s.ended;
  t.ok(s.complete(), `${agent}: the stream ended after the root's terminal status`);
  return s.events.filter((e) => e.event === 'delta').map((e) => e.data.data);
}

t.test("a call's first piece is a delta of its own; the pieces after it are coalesced", async (t) => {
  const deltas = await deltasOf(t, 'opener');
  t.strictSame(
    deltas.map((d) => d.seq),
    deltas.map((_, i) => i),
  );
  t.equal(deltas[0]?.content, FIRST, 'the first delta is exactly the first piece');
  t.ok(
    deltas.length >= 2 && deltas.length < PIECES,
    `the other pieces came as ${deltas.length - 1} delta(s)`,
  );
  t.equal(deltas.map((d) => d.content).join(''), ANSWER, 'the deltas add up to the reply');
});

t.test("a retried attempt's first piece goes out at once too, with reset", async (t) => {
  const deltas = await deltasOf(t, 'flaky');
  const retry = deltas.findLastIndex((d) => d.reset);
  t.ok(retry > 0, 'the failed attempt published deltas before the retry reset them');
  t.equal(deltas[0]?.content, 'draft', "the failed attempt's first piece went out alone");
  t.match(deltas[retry], { seq: 0, reset: true }, 'the retry starts its deltas over');
  t.equal(deltas[retry]?.content, FIRST, "the retry's first delta is exactly its first piece");
  t.equal(
    deltas
      .slice(retry)
      .map((d) => d.content)
      .join(''),
    ANSWER,
    "the retry's deltas add up to the reply",
  );
});
