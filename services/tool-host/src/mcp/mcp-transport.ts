import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Logger, McpServerConfig } from '@agentmesh/shared';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Whether a server is a process the tool-host starts (stdio) or one it reaches (Streamable HTTP). */
export const isStdio = (server: McpServerConfig): server is Extract<McpServerConfig, { command: string }> =>
  'command' in server;

/**
 * A new SDK transport for one connection to `server`: a stdio server is spawned in `cwd` (the
 * config file's directory) with the SDK's safe default environment plus its `env`, its stderr
 * forwarded to the log line by line; an HTTP one is reached with its `headers` on every request.
 */
export function mcpTransport(server: McpServerConfig, cwd: string, log: Logger): Transport {
  if (!isStdio(server)) {
    return new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { ...server.headers } },
    });
  }
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    ...(server.env ? { env: server.env } : {}),
    cwd,
    stderr: 'pipe',
  });
  // `stderr: 'pipe'` makes it a PassThrough, a Readable.
  const stderr = transport.stderr as Readable | null;
  if (stderr)
    createInterface({ input: stderr }).on('line', (line) => log.info({ stderr: line }, 'MCP server stderr'));
  return transport;
}

/** How a server is shown to its operator: the command line or the URL (without credentials or query). */
export function describeMcpServer(server: McpServerConfig): string {
  if (isStdio(server)) return [server.command, ...server.args].join(' ');
  try {
    const url = new URL(server.url);
    return `${url.origin}${url.pathname}`;
  } catch {
    return server.url;
  }
}
