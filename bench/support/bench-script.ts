import { type FakeScript, toolMessagesOf, turnOf } from '@agentmesh/test-support/fake-model';

/** Model latency of the first call of a recovery trial: long enough to SIGKILL its runner mid-call. */
export const RECOVERY_CALL_MS = 2000;
/** Latency of a parked parent's child: it never answers during the bench. */
const NEVER_MS = 3_600_000;
/** Pieces of the reply whose first delta is timed (`tokens`, `burst`): over 100 ms at 1 ms each. */
export const SHORT_REPLY_CHUNKS = 100;
/** Pieces of the long streamed reply (`long`), 1 ms apart. */
export const LONG_REPLY_CHUNKS = 2000;

/** A reply of `chunks` pieces of 5 characters (a token or so each), streamed `chunkDelayMs` apart. */
const streamed = (chunks: number, chunkDelayMs: number) => ({
  final: 'word '.repeat(chunks),
  chunks,
  chunkDelayMs,
});

/**
 * What the fake model answers each bench agent (agents name themselves `@agent <name>`):
 * `single` answers; `parent` / `fan` delegate once / 8 times, then answer; `l<i>` delegate to
 * `l<i+1>` down to the leaf `l<depth>` and pass its answer up; `slow` answers slowly the first time
 * it sees a prompt; `pparent` delegates to `pchild`, which never answers; `tokens` / `long` stream
 * 100 / 2,000 pieces 1 ms apart, `burst` 100 pieces in one write (when asked to stream); the `_json`
 * agents answer as their namesakes (on a model entry that does not stream). `latency()` is read per call.
 */
export function benchScript(latency: () => number, depth: number): FakeScript {
  const slowSeen = new Set<string>();
  return (r) => {
    const latencyMs = latency();
    const turn = turnOf(r);
    const delegate = (name: string, n: number) => ({
      calls: Array.from({ length: n }, (_, i) => ({
        name: `_subagent_${name}`,
        args: { input: `part ${i}` },
      })),
      latencyMs,
    });
    switch (r.agent) {
      case 'single':
      case 'single_json':
        return { final: 'done', latencyMs };
      case 'child':
      case 'child_json':
        return { final: 'child answer', latencyMs };
      case 'parent':
        return turn === 0 ? delegate('child', 1) : { final: 'done', latencyMs };
      case 'parent_json':
        return turn === 0 ? delegate('child_json', 1) : { final: 'done', latencyMs };
      case 'tokens':
        return { ...streamed(SHORT_REPLY_CHUNKS, 1), latencyMs };
      case 'burst':
        return { ...streamed(SHORT_REPLY_CHUNKS, 0), latencyMs };
      case 'long':
        return { ...streamed(LONG_REPLY_CHUNKS, 1), latencyMs };
      case 'fan':
        return turn === 0 ? delegate('child', 8) : { final: 'done', latencyMs };
      case 'slow': {
        const prompt = r.messages.find((m) => m.role === 'user')?.content ?? '';
        const first = !slowSeen.has(prompt);
        slowSeen.add(prompt);
        return { final: 'done', latencyMs: first ? RECOVERY_CALL_MS : 0 };
      }
      case 'pparent':
        return turn === 0 ? delegate('pchild', 1) : { final: 'done', latencyMs };
      case 'pchild':
        return { final: 'late', latencyMs: NEVER_MS };
    }
    const level = /^l(\d+)$/.exec(r.agent)?.[1];
    if (level === undefined) return { status: 400, body: { error: { message: `unknown agent ${r.agent}` } } };
    if (Number(level) === depth) return { final: 'leaf', latencyMs };
    if (turn === 0) return delegate(`l${Number(level) + 1}`, 1);
    return { final: toolMessagesOf(r)[0]?.content ?? '', latencyMs };
  };
}
