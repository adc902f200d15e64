import type { TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server';
import type { InvocationView, MeshEvent } from '@agentmesh/shared';
import { RootCallText } from '../events/root-call-text.js';
import { STREAM_START } from '../events/tree-position.js';
import type { TreeStream } from '../events/tree-stream.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { StreamedAnswer } from './follow-invocation.js';
import { artifactOf, outputArtifact, textPart } from './task-of.js';

type Update = ReturnType<typeof AgentEvent.artifactUpdate>;

/**
 * The root's answer as a streaming answer's `TaskArtifactUpdateEvent`s (docs/guides/streaming.md#a2a):
 * the text of the root's current model call as it is written (RootCallText), the first chunk with
 * `append: false`, later ones `append: true` with the added text; a new call or a reset sends the
 * text so far again with `append: false`. The last chunk (`lastChunk: true`) completes the
 * artifact to the output: what is missing appended (often nothing), or, when what was sent is not
 * where the output begins (a structured output), the whole output artifact with `append: false`.
 * A root that failed or was cancelled after its text began closes the artifact as it stands: an
 * empty appended last chunk, as a chunked artifact ends (docs/guides/streaming.md#a2a).
 */
export class AnswerChunks {
  private readonly text: RootCallText;
  /** The artifact's text as the client assembled it; undefined before the first chunk. */
  private sent: string | undefined;

  constructor(
    private readonly view: Pick<InvocationView, 'id' | 'agent'>,
    private readonly contextId: string,
  ) {
    this.text = new RootCallText(view.id);
  }

  /** The chunk `event` makes, if any. */
  take(event: MeshEvent): Update | undefined {
    const change = this.text.take(event);
    if (!change) return undefined;
    if (change.restarted || this.sent === undefined) {
      this.sent = change.text;
      return this.update([textPart(change.text)], false, false);
    }
    this.sent += change.added;
    return this.update([textPart(change.added)], true, false);
  }

  /**
   * The last chunk, for the invocation as it ended: completing the output when it succeeded,
   * else closing what was sent (none when nothing was).
   */
  last(view: InvocationView): Update | undefined {
    const whole = artifactOf(view);
    if (!whole) return this.sent === undefined ? undefined : this.update([textPart('')], true, true);
    const out = view.output;
    if (typeof out === 'string' && this.sent !== undefined && out.startsWith(this.sent))
      return this.update([textPart(out.slice(this.sent.length))], true, true);
    return this.event({ ...whole }, false, true);
  }

  private update(parts: ReturnType<typeof textPart>[], append: boolean, lastChunk: boolean): Update {
    return this.event(outputArtifact(this.view, parts), append, lastChunk);
  }

  private event(artifact: TaskArtifactUpdateEvent['artifact'], append: boolean, lastChunk: boolean): Update {
    return AgentEvent.artifactUpdate({
      taskId: this.view.id,
      contextId: this.contextId,
      artifact,
      append,
      lastChunk,
      metadata: undefined,
    });
  }
}

/**
 * Publishes the chunks of the root's answer from `stream` (the tree's events with deltas) on `bus`
 * until the stream ends (after the root's terminal status) or is closed; never rejects.
 */
export async function publishChunks(
  stream: TreeStream,
  chunks: AnswerChunks,
  bus: ExecutionEventBus,
): Promise<void> {
  try {
    for await (const { event } of stream) {
      const update = chunks.take(event);
      if (update) bus.publish(update);
    }
  } catch {
    // A Redis error ends the chunks; the last one still completes the artifact.
  } finally {
    stream.close();
  }
}

/** What streaming the root's answer needs: the gateway's tree streams, and the request's end. */
export interface AnswerStreamDeps {
  streams: TreeStreams;
  /** Aborted when the request ends: the tree's stream closes. */
  signal: AbortSignal;
}

/**
 * The root's answer streamed on `bus` as it is written, for SendStreamingMessage and SubscribeToTask
 * alike (docs/guides/streaming.md#a2a): opens the tree's stream with deltas (from their start for
 * a new invocation, `fromStart`; else from now) and publishes its chunks until the stream ends.
 */
export async function streamAnswer(
  deps: AnswerStreamDeps,
  view: Pick<InvocationView, 'id' | 'agent'>,
  contextId: string,
  fromStart: boolean,
  bus: ExecutionEventBus,
): Promise<StreamedAnswer> {
  const stream = await deps.streams.open({
    id: view.id,
    deltas: true,
    from: { events: STREAM_START, deltas: fromStart ? STREAM_START : undefined },
  });
  deps.signal.addEventListener('abort', () => stream.close(), { once: true });
  if (deps.signal.aborted) stream.close();
  const chunks = new AnswerChunks(view, contextId);
  return { settled: publishChunks(stream, chunks, bus), last: (v) => chunks.last(v) };
}
