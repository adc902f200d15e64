// A streamed model reply that breaks off mid-stream, for the tests that check how a retried
// attempt's deltas start over with `reset: true` (docs/guides/streaming.md).
import {
  type FakeModel,
  type FakeReply,
  type SeenRequest,
  type StreamControls,
  sseEvent,
} from './fake-model.js';

/** A `chat.completion.chunk` object carrying one `delta` (no finish reason), unframed: pass it to `sseEvent`. */
export const deltaChunk = (delta: object) => ({
  id: 'chatcmpl-flaky',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'fake',
  choices: [{ index: 0, delta, finish_reason: null }],
});

/**
 * A first attempt that fails mid-stream: the role, the pieces 'draft' and ' more', then an error
 * event, which the runner retries like a 5xx, so the retry's deltas start over with `reset: true`.
 * The pieces are written `chunkDelayMs` apart.
 */
export const brokenAttempt = (chunkDelayMs: number): FakeReply & StreamControls => ({
  sse: [
    sseEvent(deltaChunk({ role: 'assistant', content: '' })),
    sseEvent(deltaChunk({ content: 'draft' })),
    sseEvent(deltaChunk({ content: ' more' })),
    sseEvent({ error: { message: 'overloaded' } }),
  ],
  chunkDelayMs,
});

/** `r` is the first request the fake model got from its agent: the attempt to break. */
export const isFirstAttempt = (model: FakeModel, r: SeenRequest): boolean => r.n === model.of(r.agent)[0]?.n;

/** A reply that sends its role and `text`, then nothing more: it stalls until the call is aborted. */
export const stalledReply = (text: string): FakeReply & StreamControls => ({
  sse: [sseEvent(deltaChunk({ role: 'assistant', content: '' })), sseEvent(deltaChunk({ content: text }))],
  stall: true,
});
