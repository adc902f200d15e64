import {
  type CallRecord,
  codedError,
  decodeCalls,
  decodeInvocation,
  type InvocationState,
  type KeyLayout,
  rootOf,
} from '@agentmesh/shared';
import type { MeshScripts } from '@agentmesh/shared/redis';

// The largest epoch milliseconds a JS Date holds (ECMA-262 §21.4.1.1); past it toISOString throws.
const MAX_DATE_MS = 8.64e15;
const DATE_FIELDS = ['createdAt', 'deadline', 'startedAt', 'finishedAt'] as const;

/**
 * An invocation hash made readable whatever was stored in it: a date past what `Date` holds is
 * clamped (an unparsable one dropped, or 0 when required), a field of JSON that does not parse
 * reads as null (an error as `internal`). A stored value must never turn a read into a 500.
 */
export function sanitizeInvocationHash(
  h: Record<string, string>,
  texts: ReadonlyMap<string, string> = new Map(),
): Record<string, string> {
  const out = { ...h };
  // An output stored as a tree text (JSON) that does not parse reads as null, as an inline one.
  const json = out.outputRef === undefined ? undefined : texts.get(out.outputRef);
  if (json !== undefined && !parses(json)) {
    delete out.outputRef;
    out.output = 'null';
  }
  for (const f of DATE_FIELDS) {
    if (out[f] === undefined || out[f] === '') continue;
    const n = Number(out[f]);
    if (!Number.isFinite(n)) {
      if (f === 'startedAt' || f === 'finishedAt') delete out[f];
      else out[f] = f === 'deadline' ? String(MAX_DATE_MS) : '0';
    } else if (Math.abs(n) > MAX_DATE_MS) out[f] = String(Math.sign(n) * MAX_DATE_MS);
  }
  for (const f of ['input', 'output'] as const) {
    if (out[f] !== undefined && !parses(out[f])) out[f] = 'null';
  }
  if (out.error !== undefined && !parses(out.error))
    out.error = JSON.stringify(codedError('internal', 'The stored error is unreadable.'));
  return out;
}

/** A calls hash without the records that do not parse. */
function sanitizeCalls(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([, text]) => parses(text)));
}

/**
 * Reads an invocation (state and call records, with the tree texts they refer to: one Lua step,
 * one round trip, one write), tolerant of unreadable stored values; undefined when absent.
 */
export async function readInvocationSafely(
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
): Promise<{ state: InvocationState; calls: CallRecord[] } | undefined> {
  const root = rootOf(id);
  const [stateFlat, callsFlat, textsFlat] = (await scripts.readInvocation(
    keys.invocation(root, id),
    keys.calls(root, id),
    keys.texts(root),
  )) as [string[], string[], string[]];
  return decodeInvocationSafely(stateFlat, callsFlat, textsFlat);
}

/**
 * The invocation FINISH sent with a root's done message (`[stateFlat, callsFlat]` as JSON, the
 * answer READ_INVOCATION gives), read as tolerantly; undefined when it is not that shape.
 */
export function invocationOfDoneMessage(
  json: string,
): { state: InvocationState; calls: CallRecord[] } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  // Lua's cjson writes an empty table (no call records) as {}.
  const [state, calls] = parsed.map((flat) => (Array.isArray(flat) ? flat : []));
  if (![state, calls].every((flat) => flat!.every((v: unknown) => typeof v === 'string'))) return undefined;
  try {
    return decodeInvocationSafely(state as string[], calls as string[]);
  } catch {
    return undefined; // e.g. a version this gateway does not know: a read says so properly
  }
}

/**
 * An invocation from its flat state and calls hashes, and the tree texts they refer to (ref, text
 * pairs: tree-texts.ts), read as tolerantly; undefined without state.
 */
export function decodeInvocationSafely(
  stateFlat: string[],
  callsFlat: string[],
  textsFlat: string[] = [],
): { state: InvocationState; calls: CallRecord[] } | undefined {
  if (stateFlat.length === 0) return undefined;
  const texts = new Map(Object.entries(pairs(textsFlat)));
  return {
    state: decodeInvocation(sanitizeInvocationHash(pairs(stateFlat), texts), texts),
    calls: decodeCalls(sanitizeCalls(pairs(callsFlat)), texts),
  };
}

/** A flat HGETALL reply as an object. */
function pairs(flat: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) o[flat[i]!] = flat[i + 1]!;
  return o;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
