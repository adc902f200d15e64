import { once } from 'node:events';
import { type AgentPlan, type InvocationView, isTerminal, type MeshEvent } from '@agentmesh/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STREAM_HEADERS } from '../events/sse-writer.js';
import type { StreamSlots } from '../events/stream-slots.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import type { InvocationService, StartOptions } from '../invocations/invocation-service.js';
import type { ChatInput } from './chat-input.js';
import { chatChunk, outputText, treeUsageOf } from './completion.js';
import { invocationError, openAiError } from './openai-error.js';
import { RootText } from './root-text.js';
import type { TreeSource } from './tree-source.js';

/** What a streamed chat completion needs from the gateway. */
export interface StreamDeps {
  invocations: InvocationService;
  slots: StreamSlots;
  watches: WatchKeeper;
  source: TreeSource;
  heartbeatMs: number;
  /** Open streams, each by the function that ends it (the gateway closing ends them all). */
  open: Set<() => void>;
}

// Past the deadline a runner ends the invocation itself; this long after it, the stream stops waiting.
const DEADLINE_GRACE_MS = 10_000;

/**
 * Answers `stream: true` (docs/guides/openai-compatible.md): refusals (429 past the stream bounds,
 * 503) before anything is sent, as JSON; else `200 text/event-stream` at once, the invocation
 * started and its tree watched (runners publish deltas then), and `chat.completion.chunk` events
 * with the root's model calls' text as it is written (RootText), a `finish_reason: stop` chunk, the
 * tree's usage when asked, and `data: [DONE]`. A failed invocation ends with `data: {"error": …}`.
 * A client that goes away ends the stream; the invocation goes on, as an invoke's does.
 */
export async function streamCompletion(
  deps: StreamDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  agent: AgentPlan,
  chat: ChatInput,
  opts: Pick<StartOptions, 'timeoutMs' | 'owner' | 'traceparent' | 'idempotencyKey'> & {
    includeUsage: boolean;
  },
): Promise<void> {
  const release = deps.slots.acquire(req.meshCaller.owner);
  let view: InvocationView;
  // Watched before the invocation exists, so the runners publish its first model call's text too.
  let unwatch: (() => void) | undefined;
  try {
    view = await deps.invocations.start(agent, chat.input, {
      ...opts,
      waitMs: 0,
      history: chat.history,
      beforeLaunch: async (id) => {
        unwatch = await deps.watches.hold(id);
      },
    });
  } catch (e) {
    unwatch?.();
    release();
    throw e;
  }
  // `stop` ends the reading (client gone, or past the deadline); `closed` only the client's going.
  const stop = new AbortController();
  const closed = new AbortController();
  const raw = reply.raw;
  raw.on('close', () => {
    closed.abort();
    stop.abort();
  });
  reply.hijack();
  raw.writeHead(200, STREAM_HEADERS);
  const send = async (data: unknown) => {
    if (closed.signal.aborted) return;
    raw.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    // A slow client holds the reading back instead of filling the gateway's memory.
    if (raw.writableNeedDrain) await once(raw, 'drain', { signal: closed.signal }).catch(() => undefined);
  };
  const heartbeat = setInterval(() => {
    if (!closed.signal.aborted) raw.write(': keep-alive\n\n');
  }, deps.heartbeatMs);
  const deadline = setTimeout(
    () => stop.abort(),
    Math.max(0, Date.parse(view.deadline) + DEADLINE_GRACE_MS - Date.now()),
  );
  const end = () => stop.abort();
  deps.open.add(end);
  try {
    await send(chatChunk(view, { delta: { role: 'assistant', content: '' }, finish_reason: null }));
    const text = new RootText(view.id);
    for await (const event of deps.source(view.id, stop.signal)) {
      const content = text.take(event);
      if (content !== '') await send(chatChunk(view, { delta: { content }, finish_reason: null }));
      if (event.invocationId === view.id && endsRoot(event)) break;
    }
    if (closed.signal.aborted) return;
    const final = (await deps.invocations.view(view.id)) ?? view;
    if (final.status === 'succeeded') {
      // Nothing streamed (a code agent, or no model call's text reached us): the output is the content.
      if (!text.streamed)
        await send(chatChunk(final, { delta: { content: outputText(final.output) }, finish_reason: null }));
      await send(chatChunk(final, { delta: {}, finish_reason: 'stop' }));
      if (opts.includeUsage) await send(chatChunk(final, undefined, treeUsageOf(final)));
    } else {
      await send(failure(final).body);
    }
    await send('[DONE]');
  } catch (e) {
    req.log.warn({ err: (e as Error).message }, 'chat completion stream failed');
    await send(openAiError('internal', 'The stream failed; the invocation goes on.', 500));
  } finally {
    clearInterval(heartbeat);
    clearTimeout(deadline);
    deps.open.delete(end);
    unwatch?.();
    release();
    stop.abort();
    raw.end();
  }
}

/** The root's `output` event (its terminal status follows in the same write) or terminal `status`. */
function endsRoot(event: MeshEvent): boolean {
  if (event.type === 'output') return true;
  const status = (event.data as { status?: unknown } | null)?.status;
  return event.type === 'status' && typeof status === 'string' && isTerminal(status);
}

/**
 * The error a completion that did not succeed answers: the invocation's own; for one still running,
 * past its deadline `deadline_exceeded`, else `unavailable` (the gateway stopped waiting: it is
 * shutting down). Either names the invocation, which goes on.
 */
export function failure(view: InvocationView, now = Date.now()): ReturnType<typeof invocationError> {
  if (view.error) return invocationError(view.error);
  if (isTerminal(view.status))
    return invocationError({ code: 'cancelled', message: `The invocation was ${view.status}.` });
  const follow = `follow it at GET /invocations/${view.id}`;
  if (now >= Date.parse(view.deadline))
    return invocationError({
      code: 'deadline_exceeded',
      message: `Invocation ${view.id} is still ${view.status} past its deadline; ${follow}.`,
    });
  return invocationError({
    code: 'unavailable',
    message: `The gateway is shutting down; invocation ${view.id} goes on: ${follow}.`,
  });
}
