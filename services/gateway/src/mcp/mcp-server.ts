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
}

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
    const token = request.params._meta?.progressToken;
    let count = 0;
    const progress =
      token === undefined
        ? undefined
        : (message: string) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: ++count, message },
            });
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
