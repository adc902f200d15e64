import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server';
import { type InvocationView, isTerminal, type KeyLayout, rootOf } from '@agentmesh/shared';
import type { EventHub } from '../events/event-hub.js';
import type { InvocationReader } from '../invocations/invocation-reader.js';
import { artifactOf, stateOf } from './task-of.js';

/** What following an invocation needs from the gateway. */
export interface FollowDeps {
  reader: InvocationReader;
  hub: EventHub;
  keys: KeyLayout;
}

/** The root's answer streamed as artifact chunks by someone else (a streaming answer's AnswerChunks). */
export interface StreamedAnswer {
  /** Settles once every chunk before the end was published (the tree's stream ended or closed). */
  settled: Promise<void>;
  /**
   * The last chunk: completing the artifact to the output when the invocation succeeded, else
   * closing the artifact it began (none when no chunk went out).
   */
  last(view: InvocationView): ReturnType<typeof AgentEvent.artifactUpdate> | undefined;
}

// A re-read even without news, in case the hub missed an append (Redis reconnecting).
const SAFETY_POLL_MS = 5000;

/**
 * Publishes an invocation's progress on an A2A event bus until it ends or `signal` aborts: a status
 * update at every change of task state, read again each time its tree's event stream grows (the
 * gateway's event hub), and at the end the artifact before the terminal status — with `answer`,
 * once its chunks are out, its last chunk instead. The bus is finished at the end.
 */
export async function followInvocation(
  deps: FollowDeps,
  id: string,
  bus: ExecutionEventBus,
  signal: AbortSignal,
  contextId = id,
  answer?: StreamedAnswer,
): Promise<InvocationView | undefined> {
  let dirty = true;
  let wake: (() => void) | undefined;
  const onNews = () => {
    dirty = true;
    wake?.();
  };
  const unwatch = await deps.hub.watch(deps.keys.events(rootOf(id)), onNews);
  signal.addEventListener('abort', onNews, { once: true });
  let last: number | undefined;
  try {
    while (!signal.aborted) {
      dirty = false;
      const view = await deps.reader.view(id);
      if (!view) return undefined;
      const state = stateOf(view.status, view.pendingApprovals.length > 0);
      if (state !== last) {
        last = state;
        if (answer && isTerminal(view.status)) {
          await answer.settled;
          const update = answer.last(view);
          if (update) bus.publish(update);
        }
        const artifact = answer ? undefined : artifactOf(view);
        if (artifact)
          bus.publish(
            AgentEvent.artifactUpdate({
              taskId: id,
              contextId,
              artifact,
              append: false,
              lastChunk: true,
              metadata: undefined,
            }),
          );
        const reason = view.error ? `${view.error.code}: ${view.error.message}` : undefined;
        bus.publish(
          AgentEvent.statusUpdate({
            taskId: id,
            contextId,
            status: {
              state,
              message:
                reason === undefined
                  ? undefined
                  : {
                      messageId: `${id}-status`,
                      contextId,
                      taskId: id,
                      role: 2,
                      parts: [
                        {
                          content: { $case: 'text', value: reason },
                          metadata: undefined,
                          filename: '',
                          mediaType: '',
                        },
                      ],
                      metadata: undefined,
                      extensions: [],
                      referenceTaskIds: [],
                    },
              timestamp: new Date().toISOString(),
            },
            metadata: undefined,
          }),
        );
      }
      if (isTerminal(view.status)) return view;
      if (!dirty)
        await new Promise<void>((r) => {
          const timer = setTimeout(r, SAFETY_POLL_MS);
          wake = () => {
            clearTimeout(timer);
            r();
          };
        });
      wake = undefined;
    }
    return undefined;
  } finally {
    signal.removeEventListener('abort', onNews);
    unwatch();
    bus.finished();
  }
}
