import type { AgentCard } from '@a2a-js/sdk';
import type { Client, TransportFactory } from '@a2a-js/sdk/client';
import type { KeyLayout, Logger, MeshConfig, RemoteAgentConfig } from '@agentmesh/shared';
import type { RedisTarget } from '@agentmesh/shared/redis';
import type { ParkedWatches } from './parked-watches.js';
import { RemoteError, toRemoteError } from './remote-error.js';
import { DEFAULT_REMOTE_REQUEST_MS, remoteFetch } from './remote-fetch.js';

/** How long one activation holds its worker slot watching the remote task before it parks. */
export const DEFAULT_REMOTE_WATCH_MS = 5000;

/**
 * The remote agents of the config (`remote: {a2a, headers?}`, docs/guides/a2a-and-remote-agents.md) and one A2A client per
 * agent, built from its card the first time a runner needs it (so the remote mesh may start
 * after this one). A card that could not be fetched is fetched again on the next use.
 * The A2A SDK loads with the first remote agent used (or watched): a runner without remote agents
 * never pays its start-up cost (about 0.1 s of CPU and 10 MiB, jose included).
 */
export class RemoteAgents {
  private readonly clients = new Map<string, Promise<Client>>();
  /** The background watches of parked children (startWatching); none before it or without remote agents. */
  parked: ParkedWatches | undefined;

  constructor(
    private readonly configs: ReadonlyMap<string, RemoteAgentConfig>,
    /** How long one request may take (MESH_REMOTE_REQUEST_SECONDS); callers may end it sooner. */
    private readonly requestTimeoutMs = DEFAULT_REMOTE_REQUEST_MS,
    /** How long an activation watches the remote task before it parks (runRemoteAgent). */
    readonly watchMs = DEFAULT_REMOTE_WATCH_MS,
  ) {}

  /** The remote agents of a config, by agent name. */
  static fromConfig(config: MeshConfig, requestTimeoutMs?: number, watchMs?: number): RemoteAgents {
    const remote = Object.entries(config.agents).flatMap(([name, agent]) =>
      agent.remote ? [[name, agent.remote] as const] : [],
    );
    return new RemoteAgents(new Map(remote), requestTimeoutMs, watchMs);
  }

  /** Starts watching parked children in the background (a subscriber of its own); no-op without remote agents. */
  async startWatching(target: RedisTarget, keys: KeyLayout, log: Logger): Promise<void> {
    if (this.configs.size === 0 || this.parked) return;
    const { ParkedWatches } = await import('./parked-watches.js');
    if (this.parked) return;
    this.parked = new ParkedWatches(target, log);
    await this.parked.start(keys);
  }

  /** Stops the background watches. */
  close(): void {
    this.parked?.close();
  }

  /**
   * The A2A client of agent `name`; throws a RemoteError (transient when worth retrying), or the
   * signal's reason once it aborts. The card fetch is shared by every caller, so one caller's
   * abort (its invocation cancelled) never fails another's.
   */
  client(name: string, signal: AbortSignal): Promise<Client> {
    let client = this.clients.get(name);
    if (!client) {
      const connecting = this.connect(name);
      client = connecting;
      this.clients.set(name, connecting);
      connecting.catch(() => {
        if (this.clients.get(name) === connecting) this.clients.delete(name);
      });
    }
    return untilAborted(client, signal);
  }

  private async connect(name: string): Promise<Client> {
    const config = this.configs.get(name);
    if (!config) throw new RemoteError(`agent ${name} is not a remote agent of this config`, false);
    // The configured headers go to these origins only, and no request goes anywhere else.
    const origins = new Set([config.a2a, ...(config.allowedOrigins ?? [])].map((u) => new URL(u).origin));
    const fetchImpl = remoteFetch({
      headers: config.headers ?? {},
      origins,
      timeoutMs: this.requestTimeoutMs,
    });
    let card: AgentCard;
    try {
      const res = await fetchImpl(config.a2a, {
        headers: { accept: 'application/json', 'a2a-version': '1.0' },
      });
      // "Status: N" in the words the SDK uses for its own HTTP errors, so one classifier reads both.
      if (!res.ok) throw new Error(`agent card at ${config.a2a}: Status: ${res.status} ${res.statusText}`);
      card = (await res.json()) as AgentCard;
    } catch (e) {
      throw toRemoteError(e);
    }
    const { ClientFactory, JsonRpcTransportFactory } = await import('@a2a-js/sdk/client');
    const transport = sameOrigins(new JsonRpcTransportFactory({ fetchImpl }), origins);
    const factory = new ClientFactory({ transports: [transport] });
    try {
      return await factory.createFromAgentCard(card);
    } catch (e) {
      throw new RemoteError(`unusable agent card at ${config.a2a}: ${(e as Error).message}`, false);
    }
  }
}

/**
 * A transport factory that refuses an interface on an origin not allowed (docs/guides/a2a-and-remote-agents.md): the card's
 * own, or one of `remote.allowedOrigins`. The fetch refuses such requests too; this says so when
 * the client is made, naming the interface.
 */
function sameOrigins(factory: TransportFactory, origins: ReadonlySet<string>): TransportFactory {
  return {
    get protocolName() {
      return factory.protocolName;
    },
    create(url, card) {
      let origin: string;
      try {
        origin = new URL(url).origin;
      } catch {
        throw new Error(`its interface URL ${JSON.stringify(url)} is not a URL`);
      }
      if (!origins.has(origin))
        throw new Error(
          `its interface ${url} is on ${origin}, not the card's origin; allow it in remote.allowedOrigins`,
        );
      return factory.create(url, card);
    },
  };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
