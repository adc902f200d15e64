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

/** Polls until a catalogue is published (services may start in any order). */
export async function waitForCatalogue(
  redis: CatalogueReader,
  keys: KeyLayout,
  opts: { intervalMs?: number; signal?: AbortSignal; onWait?: () => void } = {},
): Promise<Catalogue> {
  let warned = false;
  for (;;) {
    const c = await readCatalogue(redis, keys).catch(() => undefined);
    if (c) return c;
    if (!warned) opts.onWait?.();
    warned = true;
    if (opts.signal?.aborted) throw opts.signal.reason;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}
