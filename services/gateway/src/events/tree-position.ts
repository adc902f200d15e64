/**
 * Where a client stands in a tree's two streams (docs/reference/rest-api.md#events): the last
 * structural event it got (`events`, an entry id of `keys.events`) and, with deltas, the last delta
 * (`deltas`, an entry id of `keys.deltas`; undefined: from now). A stream with deltas names each
 * event `<events>_<deltas>`, so one `Last-Event-ID` resumes both.
 */
export interface TreePosition {
  events: string;
  deltas: string | undefined;
}

/** The id before every entry of a stream. */
export const STREAM_START = '0-0';

const MAX_ID_PART = 2n ** 64n - 1n;

/** A stream entry id Redis accepts (`<ms>-<seq>`, each part within 64 bits), else undefined. */
export function streamEntryId(text: string): string | undefined {
  if (!/^\d{1,20}-\d{1,20}$/.test(text)) return undefined;
  const [ms, seq] = text.split('-').map(BigInt) as [bigint, bigint];
  return ms <= MAX_ID_PART && seq <= MAX_ID_PART ? text : undefined;
}

/**
 * The position a `Last-Event-ID` names: a plain entry id resumes the structural events after it
 * and the deltas from now; a composite one both (a bad delta part: deltas from now); anything else
 * (or none) is the start of the structural events and deltas from now.
 */
export function positionOf(header: string | string[] | undefined): TreePosition {
  if (typeof header !== 'string' || header.length > 100) return { events: STREAM_START, deltas: undefined };
  const [events, deltas, ...rest] = header.split('_');
  const e = streamEntryId(events ?? '');
  if (e === undefined || rest.length > 0) return { events: STREAM_START, deltas: undefined };
  if (deltas === undefined) return { events: e, deltas: undefined };
  return { events: e, deltas: streamEntryId(deltas) };
}

/** The SSE id of a position: the plain structural id without deltas, composite with them. */
export function positionId(p: TreePosition, withDeltas: boolean): string {
  return withDeltas ? `${p.events}_${p.deltas ?? STREAM_START}` : p.events;
}

/** Compares two stream entry ids (negative when `a` comes first). */
export function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}
