// The tool-host's embeddable parts: tests and tools start it in-process on port 0.
export { buildToolHost, type ToolHostOptions } from './app.js';
export { CancelWatch } from './cancel/cancel-watch.js';
export { OutcomeStore } from './idempotency/outcome-store.js';
export { type LoadedTool, loadToolDefinitions, loadTools } from './load-tools.js';
export type { McpConnection } from './mcp/mcp-connection.js';
export { MCP_TIMING, type McpTiming } from './mcp/mcp-timing.js';
export { type MountedMcpServers, mountMcpServers } from './mcp/mount-mcp-servers.js';
export { publishCatalogue } from './publish-catalogue.js';
