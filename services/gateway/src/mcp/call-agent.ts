import { compileSchema, describeValidation, MeshError } from '@agentmesh/shared';
import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import type { StreamSlots } from '../events/stream-slots.js';
import { STREAM_START } from '../events/tree-position.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { nameList } from '../setup/name-list.js';
import { type SendProgress, sendProgress } from './call-progress.js';
import type { McpCalls } from './mcp-calls.js';
import { RpcError } from './rpc-error.js';
import { toolResult } from './tool-result.js';
import { toolSchemas } from './tool-schemas.js';

/** What answering a tools/call needs from the gateway. */
export interface CallAgentDeps {
  mesh: MeshState;
  invocations: InvocationService;
  calls: McpCalls;
  /** How long a call waits for the agent (MESH_MCP_WAIT_SECONDS). */
  waitSeconds: number;
  /** The invocation's deadline (MESH_DEFAULT_TIMEOUT_SECONDS). */
  defaultTimeoutSeconds: number;
  /** A call with a progress token follows the root's text through these (docs/guides/streaming.md#mcp). */
  streams: TreeStreams;
  watches: WatchKeeper;
  /** The gateway's open streams: a call with a progress token takes one, as an event stream does. */
  slots: StreamSlots;
  /**
   * The end of every answer still following a tree (TreeStreaming's `open`): closing the gateway
   * ends each call's wait, which then answers with the invocation as it stands (it goes on).
   */
  open: Set<() => void>;
}

/** One tools/call as the route received it. */
export interface AgentCall {
  caller: Caller;
  name: string;
  args: Record<string, unknown> | undefined;
  /** The request's scope (McpCalls.scope): a cancellation naming it cancels the invocation. */
  scope: string;
  /** Aborted when the client went away (or the server closed): the wait ends, the invocation goes on. */
  signal: AbortSignal;
  traceparent: string | undefined;
  /** Ends the HTTP answer without a response, as a cancelled request gets none (MCP cancellation). */
  abandon(): void;
  /** Set when the request carries `_meta.progressToken`: sends a progress notification. */
  progress?: SendProgress | undefined;
}

/**
 * Answers an MCP tools/call by invoking the agent as `POST /agents/{name}/invoke` does and waiting
 * for it (docs/guides/mcp.md). An unknown agent, or one outside the API key's scope, is a JSON-RPC invalid
 * params error; arguments that fail the agent's input schema are an `isError` result naming each
 * problem (so a model can correct them); a cancellation of the request cancels the invocation.
 */
export async function callAgent(deps: CallAgentDeps, call: AgentCall): Promise<CallToolResult> {
  const plan = deps.mesh.plan;
  if (!plan)
    throw new RpcError(
      ErrorCode.InternalError,
      'unavailable: the tool catalogue has not been published yet.',
    );
  const agent = Object.hasOwn(plan.agents, call.name) ? plan.agents[call.name] : undefined;
  if (!agent || !call.caller.mayUse(agent.name)) {
    // As REST's 404 lists the agents: the right name is one look away.
    const tools = Object.keys(plan.agents).filter((a) => call.caller.mayUse(a));
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Unknown tool: ${call.name}. The tools you may call: ${nameList(tools)}.`,
    );
  }
  const args = call.args ?? {};
  const input = toolSchemas(agent).wrapped ? args.input : args;
  if (agent.inputSchema) {
    const verdict = compileSchema(agent.inputSchema)(input);
    if (!verdict.ok) {
      const text = `invalid_input: ${describeValidation(verdict.details)}`;
      return { content: [{ type: 'text', text }], isError: true };
    }
  }
  // Watching the tree's deltas, a call with progress counts as an open stream (docs/reference/bounds.md):
  // past the bounds it is refused before anything starts.
  let release: (() => void) | undefined;
  try {
    release = call.progress ? deps.slots.acquire(call.caller.owner) : undefined;
  } catch (e) {
    if (e instanceof MeshError) throw new RpcError(ErrorCode.InternalError, `${e.code}: ${e.message}`);
    throw e;
  }
  const wait = new AbortController();
  let cancelled = false;
  const untrack = deps.calls.track(call.scope, () => {
    cancelled = true;
    wait.abort();
  });
  const onGone = () => wait.abort();
  call.signal.addEventListener('abort', onGone, { once: true });
  // Registered before the invocation starts: a wait that began after the gateway's closing ended
  // the open tree streams would otherwise follow its invocation on, holding the closing.
  deps.open.add(onGone);
  // With progress, the tree is watched before the invocation exists (its first deltas are
  // published), and its stream is the wait: it ends after the root's terminal status.
  let unwatch: (() => void) | undefined;
  try {
    let view = await deps.invocations
      .start(agent, input, {
        timeoutMs: deps.defaultTimeoutSeconds * 1000,
        waitMs: call.progress ? 0 : deps.waitSeconds * 1000,
        signal: wait.signal,
        owner: call.caller.owner,
        traceparent: call.traceparent,
        beforeLaunch: call.progress
          ? async (id) => {
              unwatch = await deps.watches.hold(id);
            }
          : undefined,
      })
      .catch((e: unknown) => {
        if (e instanceof MeshError) throw new RpcError(ErrorCode.InternalError, `${e.code}: ${e.message}`);
        throw e;
      });
    if (call.progress) {
      await waitWithProgress(deps, view.id, call.progress, wait.signal);
      view = (await deps.invocations.view(view.id)) ?? view;
    }
    untrack();
    if (cancelled) {
      await deps.invocations.cancel(view.id, call.caller);
      call.abandon();
    }
    return toolResult(view, deps.waitSeconds);
  } finally {
    release?.();
    unwatch?.();
    untrack();
    deps.open.delete(onGone);
    call.signal.removeEventListener('abort', onGone);
  }
}

/**
 * Waits for the invocation as the tree's stream with deltas tells it, at most `waitSeconds`, or
 * until `signal` aborts, sending the root's text so far as progress (sendProgress).
 */
async function waitWithProgress(
  deps: CallAgentDeps,
  id: string,
  progress: SendProgress,
  signal: AbortSignal,
): Promise<void> {
  const stream = await deps.streams.open({
    id,
    deltas: true,
    from: { events: STREAM_START, deltas: STREAM_START },
  });
  const stop = () => stream.close();
  const timer = setTimeout(stop, deps.waitSeconds * 1000);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  try {
    await sendProgress(stream, id, progress);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}
