import type { KeyLayout } from '@agentmesh/shared';
import { type MeshRedis, readCatalogue } from '@agentmesh/shared/redis';
import type { FastifyBaseLogger } from 'fastify';
import { publishDefinitions } from '../forks/publish-definitions.js';
import type { MeshState } from '../mesh-state.js';

// How often the gateway writes its agents' definitions again (each lives longer than this).
const DEFINITION_RENEW_SECONDS = 3600;

export interface CatalogueSyncOptions {
  redis: MeshRedis;
  /** The connection in subscriber mode that hears the catalogue's publications. */
  subscriber: MeshRedis;
  keys: KeyLayout;
  mesh: MeshState;
  /** The longest an invocation may run, and how long it is kept after (both in seconds). */
  maxTimeoutSeconds: number;
  retentionSeconds: number;
  /** Where a catalogue that cannot be applied is logged (read when it happens). */
  log: () => FastifyBaseLogger;
}

/**
 * Keeps the gateway's plan (MeshState) on the tool-host's catalogue: read at start, again on each
 * publication, and polled until the first one arrives (a publish may precede the subscription).
 * Each agent's definition is written by its hash whenever the plan changes, and renewed, for as
 * long as an invocation made with it may be forked (docs/guides/durability.md). Resolves once the
 * first read is done and the subscription is in place; `close()` stops the timers.
 */
export async function syncCatalogue(o: CatalogueSyncOptions): Promise<{ close(): void }> {
  const { redis, subscriber, keys, mesh } = o;
  // Each agent's definition by its hash, for as long as an invocation made with it may be forked
  // (its deadline, then the retention), renewed well within that (docs/guides/durability.md).
  const definitionTtl = o.maxTimeoutSeconds + o.retentionSeconds + DEFINITION_RENEW_SECONDS;
  const publish = () => {
    const plan = mesh.plan;
    if (plan) void publishDefinitions(redis, keys, plan, definitionTtl).catch(() => undefined);
  };
  const renew = setInterval(publish, DEFINITION_RENEW_SECONDS * 1000);
  renew.unref();
  const refresh = async () => {
    const catalogue = await readCatalogue(redis, keys).catch(() => undefined);
    if (catalogue) {
      const before = mesh.plan;
      mesh.apply(catalogue);
      if (mesh.plan !== before) publish();
    }
  };
  await refresh();
  subscriber.on('message', (channel: string) => {
    if (channel === keys.catalogueChannel())
      void refresh().catch((e: Error) => o.log().error({ err: e.message }, 'bad catalogue'));
  });
  await subscriber.subscribe(keys.catalogueChannel());
  // Until the first catalogue arrives, poll for it too (a publish may precede our subscription).
  const poll = setInterval(() => {
    if (mesh.plan) clearInterval(poll);
    else void refresh().catch((e: Error) => o.log().error({ err: e.message }, 'bad catalogue'));
  }, 500);
  return {
    close() {
      clearInterval(poll);
      clearInterval(renew);
    },
  };
}
