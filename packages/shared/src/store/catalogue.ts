import type { KeyLayout } from '../keys.js';
import type { ToolInfo } from '../plan/types.js';

/** The tool-host's published catalogue: a version that grows on every publish, and the tools. */
export interface Catalogue {
  version: number;
  tools: ToolInfo[];
}

/** The part of an ioredis client reading the catalogue needs. */
export interface CatalogueReader {
  hgetall(key: string): Promise<Record<string, string>>;
}

/** Reads the catalogue, or undefined while no tool-host has published one. */
export async function readCatalogue(redis: CatalogueReader, keys: KeyLayout): Promise<Catalogue | undefined> {
  const h = await redis.hgetall(keys.catalogue());
  if (!h.tools) return undefined;
  return { version: Number(h.version ?? 0), tools: JSON.parse(h.tools) as ToolInfo[] };
}

/**
 * Polls until a catalogue is published (services may start in any order). An abort of
 * `signal` ends the wait at once with its reason, also while a read hangs (an unreachable Redis
 * holds ioredis's commands until it answers).
 */
export async function waitForCatalogue(
  redis: CatalogueReader,
  keys: KeyLayout,
  opts: { intervalMs?: number; signal?: AbortSignal; onWait?: () => void } = {},
): Promise<Catalogue> {
  const { signal } = opts;
  signal?.throwIfAborted();
  let stop = () => {};
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal!.reason);
    signal?.addEventListener('abort', stop, { once: true });
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    let warned = false;
    for (;;) {
      const c = await Promise.race([readCatalogue(redis, keys).catch(() => undefined), aborted]);
      if (c) return c;
      if (!warned) opts.onWait?.();
      warned = true;
      await Promise.race([new Promise((r) => (timer = setTimeout(r, opts.intervalMs ?? 250))), aborted]);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}
