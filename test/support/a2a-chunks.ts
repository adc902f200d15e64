// An A2A artifact streamed in chunks (docs/guides/streaming.md#a2a), as the tests read it.
import type { Test } from 'tap';

/** One TaskArtifactUpdateEvent as a test saw it. */
export interface Chunk {
  text: string;
  append: boolean;
  lastChunk: boolean;
  /** The invocation's status when the client got the chunk. */
  status: string;
}

/** The artifact's text as a client assembles its chunks: `append` adds, else it replaces. */
export const assemble = (chunks: { append: boolean; text: string }[]) =>
  chunks.reduce((s, c) => (c.append ? s + c.text : c.text), '');

/**
 * What every streamed answer shows: several chunks, the first starting the artifact and the rest
 * appending, only the last one `lastChunk`, some of them while the invocation still ran, and
 * together the answer.
 */
export function checkChunkedAnswer(t: Test, chunks: Chunk[], answer: string): void {
  t.ok(chunks.length >= 3, `several chunks (${chunks.length})`);
  t.equal(chunks[0]!.append, false, 'the first chunk starts the artifact');
  t.ok(
    chunks.slice(1).every((c) => c.append),
    'later chunks append',
  );
  t.strictSame(
    chunks.map((c) => c.lastChunk),
    [...chunks.slice(1).map(() => false), true],
    'only the last is the last chunk',
  );
  t.ok(
    chunks.slice(0, -1).some((c) => c.status === 'running'),
    'chunks came while the invocation was still running',
  );
  t.equal(assemble(chunks), answer, 'the assembled artifact is the output');
}
