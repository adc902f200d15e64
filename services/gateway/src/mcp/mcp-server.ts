import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ErrorCode,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth/caller.js';
import { agentTools } from './agent-tools.js';
import { type CallAgentDeps, callAgent } from './call-agent.js';
import { McpCalls } from './mcp-calls.js';
import { RpcError } from './rpc-error.js';

/** Who sent one POST /mcp, and how its answer ends early. */
export interface McpRequestContext {
  caller: Caller;
  /** The client's `Mcp-Session-Id` (a correlation token, see McpCalls), if it sent one. */
  session: string | undefined;
  traceparent: string | undefined;
  /** Ends the HTTP answer without sending the pending response. */
  abandon(): void;
  /**
   * True when a progress notification of about `bytes` may go out now, within the bound on what
   * the gateway holds unsent for the client (MESH_STREAM_BUFFER_BYTES, as for a stream's deltas).
   */
  progressFits(bytes: number): boolean;
}

// What the SDK's transport adds around a notification's JSON in its answer: `event: message\ndata: `…`\n\n`.
const FRAME_BYTES = 23;

const INSTRUCTIONS =
  'Each tool is an agent of this agentmesh: calling it runs the agent and answers with its output. ' +
  'A result marked isError names the invocation; one still running can be followed over REST at GET /invocations/{id}.';

/**
 * The MCP server answering one POST /mcp (the SDK's stateless pattern: one server per request):
 * `tools/list` lists the agents the caller may use, `tools/call` invokes one, and a
 * `notifications/cancelled` cancels the named call wherever it runs (McpCalls).
 */
export function mcpServer(deps: CallAgentDeps, ctx: McpRequestContext): Server {
  // The low-level Server: tools are described by the agents' JSON Schemas, which McpServer's
  // registerTool (zod shapes) cannot take as they are.
  const server = new Server(
    { name: 'agentmesh', version: '0.1.0' },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const { caller, session } = ctx;
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const plan = deps.mesh.plan;
    if (!plan)
      throw new RpcError(
        ErrorCode.InternalError,
        'unavailable: the tool catalogue has not been published yet.',
      );
    return { tools: agentTools(plan, caller) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    // docs/guides/streaming.md#mcp: progress counts the notifications, the message is the text so far.
    // One past the bound is dropped: the next one carries the whole text so far.
    const token = request.params._meta?.progressToken;
    let count = 0;
    const progress =
      token === undefined
        ? undefined
        : async (message: string) => {
            const notification = {
              method: 'notifications/progress' as const,
              params: { progressToken: token, progress: count + 1, message },
            };
            const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', ...notification }));
            if (!ctx.progressFits(bytes + FRAME_BYTES)) return;
            count++;
            await extra.sendNotification(notification);
          };
    return callAgent(deps, {
      caller,
      name: request.params.name,
      args: request.params.arguments,
      scope: McpCalls.scope(caller.owner, session, extra.requestId),
      signal: extra.signal,
      traceparent: ctx.traceparent,
      abandon: ctx.abandon,
      progress,
    });
  });
  // Replaces the SDK's own handler, which only knows this request's server: the call it names
  // usually runs under another POST, maybe on another gateway.
  server.setNotificationHandler(CancelledNotificationSchema, async (n) => {
    if (n.params.requestId === undefined) return;
    await deps.calls.cancel(McpCalls.scope(caller.owner, session, n.params.requestId));
  });
  return server;
}
