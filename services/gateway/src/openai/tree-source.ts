import type { KeyLayout, MeshEvent, MeshRedis } from '@agentmesh/shared';
import type { EventHub } from '../events/event-hub.js';
import { resolveEvent } from '../events/resolve-event.js';

/**
 * The events of a fresh tree a streamed chat completion reads: its structural events and its
 * delta events, from their starts, until `signal` aborts (the caller stops at the root's end).
 * Injected into the route, so another reader of the tree's streams can stand in for this one.
 */
export type TreeSource = (rootId: string, signal: AbortSignal) => AsyncIterable<MeshEvent>;

type Entry = [string, string[]];
const PAGE = 200;
// A read again even without news, in case the hub missed an append (Redis reconnecting).
const SAFETY_POLL_MS = 5000;

/**
 * A TreeSource over the gateway's event hub: it is told when either stream of the tree grows
 * (`keys.events`, `keys.deltas`, docs/reference/redis-layout.md) and reads the new entries with
 * non-blocking XRANGE, a page at a time as the caller takes them (a slow client holds it back).
 * Each read's entries of both streams are given in Redis id order (one server clock per tree).
 */
export function hubTreeSource(deps: { redis: MeshRedis; keys: KeyLayout; hub: EventHub }): TreeSource {
  const { redis, keys, hub } = deps;
  return async function* read(rootId, signal) {
    const streams = [keys.events(rootId), keys.deltas(rootId)];
    const cursors = ['0-0', '0-0'];
    let dirty = true;
    let wake: (() => void) | undefined;
    const notify = () => {
      dirty = true;
      wake?.();
    };
    const unwatch: (() => void)[] = [];
    signal.addEventListener('abort', notify, { once: true });
    try {
      for (const stream of streams) unwatch.push(await hub.watch(stream, notify));
      while (!signal.aborted) {
        dirty = false;
        const pages = await Promise.all(
          streams.map((s, i) => redis.xrange(s, `(${cursors[i]}`, '+', 'COUNT', PAGE) as Promise<Entry[]>),
        );
        pages.forEach((page, i) => {
          if (page.length > 0) cursors[i] = page.at(-1)![0];
        });
        const entries = pages.flat().sort(([a], [b]) => compareIds(a, b));
        for (const [, fields] of entries) {
          const event = parse(fields[1]);
          if (!event) continue;
          yield await resolveEvent(redis, keys, event);
          if (signal.aborted) return;
        }
        if (pages.some((p) => p.length === PAGE) || dirty) continue;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, SAFETY_POLL_MS);
          wake = () => {
            clearTimeout(timer);
            r();
          };
        });
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', notify);
      for (const stop of unwatch) stop();
    }
  };
}

/** Orders two stream entry ids (`<ms>-<seq>`) as Redis does. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

function parse(text: string | undefined): MeshEvent | undefined {
  try {
    return JSON.parse(text ?? '') as MeshEvent;
  } catch {
    return undefined;
  }
}
