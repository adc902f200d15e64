/** How quickly an MCP server's connection is retried and checked (mcp-connection.ts), and the production values. */

/** How quickly a connection is retried and checked; the defaults suit production. */
export interface McpTiming {
  /** The first wait before restarting or reconnecting a server; doubled after each failure. */
  retryInitialMs: number;
  retryMaxMs: number;
  /** A server up this long is healthy again: its next loss is retried after the first wait. */
  stableMs: number;
  /** How often an HTTP server is pinged, and how long a ping (or the initialize handshake) may take. */
  pingIntervalMs: number;
  requestTimeoutMs: number;
  /** How long the first connection to an HTTP server is retried at start (it may start later). */
  startWaitMs: number;
}

/** Production timing. */
export const MCP_TIMING: McpTiming = {
  retryInitialMs: 250,
  retryMaxMs: 10_000,
  stableMs: 30_000,
  pingIntervalMs: 5_000,
  requestTimeoutMs: 10_000,
  startWaitMs: 30_000,
};
