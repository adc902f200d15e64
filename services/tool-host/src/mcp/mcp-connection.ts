import { type Logger, type McpServerConfig, MeshError } from '@agentmesh/shared';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MCP_MAX_TOOLS, listMcpTools, ToolListError } from './list-mcp-tools.js';
import { isRefused, isTransportFailure, messageOf } from './mcp-failures.js';
import { MCP_TIMING, type McpTiming } from './mcp-timing.js';
import { describeMcpServer, isStdio, mcpTransport } from './mcp-transport.js';
import { RestartWaits } from './restart-waits.js';

export { MCP_TIMING, type McpTiming } from './mcp-timing.js';

/** What readiness reports of a server that is down. */
export interface McpOutage {
  /** `tools[1]`: where the config mounts it. */
  path: string;
  server: string;
  /** `restarting` (stdio) or `reconnecting` (HTTP). */
  state: 'restarting' | 'reconnecting';
  since: string;
}

/**
 * One mounted MCP server (docs/guides/mcp.md) through the SDK's Client: connected at start, a dead stdio
 * server restarted and a dropped HTTP one reconnected with backoff (HTTP servers are pinged, since
 * only a failed request shows they are gone). A call that comes while a stdio server is being
 * restarted waits for it, within the call's timeout: it fails once the next attempt could no
 * longer bring the server back in time (a server that stays down). While an HTTP server is gone,
 * calls fail at once. A call in flight when its server goes away is in doubt (`tool_in_doubt`).
 */
export class McpConnection {
  /** The server's own name (`serverInfo.name`), known once connected. */
  name: string;
  private client: Client | undefined;
  private outage: { since: Date } | undefined;
  private closed = false;
  private upSince = 0;
  private retryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private startTools: string[] = [];
  /** Calls waiting for a restart, and when the next attempt starts and how long the last one took. */
  private readonly restartWaits = new RestartWaits();
  private lastFailure: string | undefined;

  constructor(
    private readonly server: McpServerConfig,
    /** Where the config mounts it: `tools[1]`. */
    readonly path: string,
    private readonly cwd: string,
    private readonly log: Logger,
    private readonly timing: McpTiming = MCP_TIMING,
    /** Tools the server may list (MESH_MCP_MAX_TOOLS); past it the start fails. */
    private readonly maxTools = DEFAULT_MCP_MAX_TOOLS,
  ) {
    this.name = describeMcpServer(server);
    this.retryMs = timing.retryInitialMs;
  }

  /** How messages name it: `MCP server "files" (tools[1])`. */
  get title(): string {
    return `MCP server "${this.name}" (${this.path})`;
  }

  /**
   * Connects for the first time and lists the server's tools. A stdio server gets one try (it is
   * ours to start: a failure is a config error); an HTTP one is retried for `startWaitMs`.
   */
  async start(): Promise<Tool[]> {
    const giveUpAt = Date.now() + (isStdio(this.server) ? 0 : this.timing.startWaitMs);
    let wait = this.timing.retryInitialMs;
    for (;;) {
      try {
        const tools = await this.open();
        this.startTools = tools.map((t) => t.name).sort();
        return tools;
      } catch (e) {
        // A tool list past the bounds is the server's answer, not a connection to retry.
        if (e instanceof ToolListError)
          throw new Error(`MCP server ${describeMcpServer(this.server)}: ${e.message}`);
        if (this.closed || Date.now() + wait > giveUpAt) {
          const verb = isStdio(this.server) ? 'start' : 'reach';
          throw new Error(`cannot ${verb} MCP server ${describeMcpServer(this.server)}: ${messageOf(e)}`);
        }
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(this.timing.retryMaxMs, wait * 2);
      }
    }
  }

  /** Calls a tool; `signal` (the invocation's cancellation or the call's timeout) is sent on as an MCP cancellation. */
  async call(tool: string, args: unknown, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    const deadline = Date.now() + timeoutMs;
    let client = this.client ?? (await this.restarted(signal, deadline));
    for (let again = false; ; again = true) {
      try {
        const params = { name: tool, arguments: args as Record<string, unknown> };
        // The SDK's own timer is a backstop: the tool-host's timeout aborts `signal` first.
        return (await client.callTool(params, undefined, {
          signal,
          timeout: timeoutMs + 1000,
        })) as CallToolResult;
      } catch (e) {
        if (signal.aborted || !isTransportFailure(e)) throw e;
        this.log.warn({ err: messageOf(e), tool }, `${this.title}: the call failed in transit`);
        void this.check(client);
        if (!isRefused(e)) {
          throw new MeshError(
            'tool_in_doubt',
            `The call may or may not have taken effect: ${this.title} went away while it ran.`,
          );
        }
        // It never reached the server (gone a moment before): it runs on the restarted one, once.
        if (again) throw this.unavailable();
        client = await this.restarted(signal, deadline, client);
      }
    }
  }

  /** Undefined while the server is up; else what readiness says of it. */
  outageReport(): McpOutage | undefined {
    if (!this.outage) return undefined;
    return {
      path: this.path,
      server: this.name,
      state: isStdio(this.server) ? 'restarting' : 'reconnecting',
      since: this.outage.since.toISOString(),
    };
  }

  /** Stops retrying and closes the connection (a stdio server's process ends with it). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.restartWaits.rejectAll(() => this.unavailable());
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  /** One connection: the SDK's initialize handshake (protocol version negotiated), then tools/list. */
  private async open(): Promise<Tool[]> {
    const client = new Client({ name: 'agentmesh-tool-host', version: '0.1.0' });
    client.onclose = () => this.lost(client, 'the connection closed');
    // The SDK reports a dropped HTTP stream here first: see whether the server still answers.
    client.onerror = (e) => {
      if (this.client !== client) return;
      this.log.debug({ err: e.message }, `${this.title}: transport error`);
      void this.check(client);
    };
    try {
      await client.connect(mcpTransport(this.server, this.cwd, this.log), {
        timeout: this.timing.requestTimeoutMs,
      });
      const tools = await listMcpTools(client, {
        timeoutMs: this.timing.requestTimeoutMs,
        maxTools: this.maxTools,
      });
      if (this.closed) throw new Error('the tool-host is closing');
      this.name = client.getServerVersion()?.name || this.name;
      this.client = client;
      this.outage = undefined;
      this.upSince = Date.now();
      this.log.info(
        { protocolVersion: protocolVersionOf(client), tools: tools.length },
        `${this.title} connected`,
      );
      this.schedulePing(client);
      return tools;
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
  }

  /** Pings an HTTP server; no answer means it is gone. */
  private async check(client: Client): Promise<void> {
    if (this.checking || this.client !== client) return;
    this.checking = true;
    try {
      await client.ping({ timeout: this.timing.requestTimeoutMs });
    } catch (e) {
      this.lost(client, `no answer to ping: ${messageOf(e)}`);
    } finally {
      this.checking = false;
    }
  }

  private schedulePing(client: Client): void {
    if (isStdio(this.server)) return; // a stdio server's exit closes its transport
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      await this.check(client);
      if (this.client === client) this.schedulePing(client);
    }, this.timing.pingIntervalMs);
  }

  /** The connection is gone: calls in flight end in doubt (closing the client rejects them) and a retry is scheduled. */
  private lost(client: Client, reason: string): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.outage = { since: new Date() };
    clearTimeout(this.timer);
    const stable = Date.now() - this.upSince >= this.timing.stableMs;
    this.retryMs = stable ? this.timing.retryInitialMs : Math.min(this.timing.retryMaxMs, this.retryMs * 2);
    this.log.warn(
      { reason },
      `${this.title} is down; ${isStdio(this.server) ? 'restarting' : 'reconnecting'}`,
    );
    void client.close().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.closed) return;
    this.restartWaits.nextAttemptAt = Date.now() + this.retryMs;
    this.timer = setTimeout(async () => {
      const began = Date.now();
      try {
        const tools = await this.open();
        this.lastFailure = undefined;
        this.restartWaits.resolveAll(this.client!);
        const names = tools.map((t) => t.name).sort();
        if (names.join('\n') !== this.startTools.join('\n')) {
          // The catalogue is published once: a changed list is served as it was at start.
          this.log.warn(
            { now: names, atStart: this.startTools },
            `${this.title} lists other tools than at start`,
          );
        }
      } catch (e) {
        if (this.closed) return;
        this.restartWaits.attemptMs = Date.now() - began;
        this.lastFailure = messageOf(e);
        this.log.warn({ err: messageOf(e), retryInMs: this.retryMs }, `${this.title} is still down`);
        this.retryMs = Math.min(this.timing.retryMaxMs, this.retryMs * 2);
        this.retry();
        this.restartWaits.rejectHopeless(() => this.unavailable());
      }
    }, this.retryMs);
  }

  /**
   * The client once a stdio server is back (a new one, not `stale`), waiting while it is restarted
   * until `signal` aborts (the call's timeout or cancellation) or the next attempt could not bring
   * it back before `deadline`. An HTTP server's call does not wait: it fails at once.
   */
  private restarted(signal: AbortSignal, deadline: number, stale?: Client): Promise<Client> {
    if (this.client && this.client !== stale) return Promise.resolve(this.client);
    // Not known down yet (`stale` failed a moment before its close was seen): its loss is on the way.
    const known = this.outage !== undefined;
    if (this.closed || !isStdio(this.server) || (known && this.restartWaits.hopeless(deadline)))
      return Promise.reject(this.unavailable());
    return this.restartWaits.wait(signal, deadline, () => this.unavailable());
  }

  private unavailable(): MeshError {
    if (!isStdio(this.server))
      return new MeshError('tool_failed', `${this.title} is unavailable: reconnecting.`);
    const last = this.lastFailure ? ` (its last restart failed: ${this.lastFailure})` : '';
    return new MeshError(
      'tool_failed',
      `${this.title} is unavailable: it is being restarted and is not back within the call's time${last}.`,
    );
  }
}

function protocolVersionOf(client: Client): string | undefined {
  // The SDK keeps the negotiated version on the transport (HTTP sends it as a header); stdio does not expose it.
  return (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion;
}
