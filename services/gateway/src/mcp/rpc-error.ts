/**
 * A JSON-RPC error a /mcp handler throws: the SDK sends its `code` and its message as written.
 * The SDK's McpError prefixes its message with `MCP error <code>: `, which the client's McpError
 * adds again (a user read "MCP error -32602: MCP error -32602: …").
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}
