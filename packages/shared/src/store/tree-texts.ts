import { createHash } from 'node:crypto';
import { EVENT_INLINE_BYTES } from '../defaults.js';
import { rootOf } from '../ids.js';
import { truncateResult } from '../json/truncate-result.js';
import type { KeyLayout } from '../keys.js';
import type { CallRecord } from '../wire/call-record.js';

// A text past EVENT_INLINE_BYTES (an answer, a model reply, a delegation's result) is stored once
// per tree, in its texts hash (KeyLayout.texts) under its SHA-256; the states and records that hold
// it refer to it (docs/reference/redis-layout.md). The same answer as an output, as the reply that
// gave it and as the parent's tool message is then one entry. Smaller texts stay where they were.

/** The texts a write stores with it, or a read put back: SHA-256 (hex) → text. */
export type TreeTexts = Map<string, string>;

/** Where an invocation's output lives in its hash: inline, or a tree text (as JSON, or the string itself). */
export type OutputField = 'output' | 'outputRef' | 'outputTextRef';

/** The ref `text` is stored under, added to `texts`; undefined for a text small enough to stay inline. */
export function storeTextOnce(text: string, texts: TreeTexts): string | undefined {
  if (Buffer.byteLength(text, 'utf8') <= EVENT_INLINE_BYTES) return undefined;
  const ref = createHash('sha256').update(text).digest('hex');
  texts.set(ref, text);
  return ref;
}

/** An output's field and value in the invocation's hash: a large string refers to itself as text. */
export function outputFieldOf(output: unknown, texts: TreeTexts): [OutputField, string] {
  const text = typeof output === 'string' ? storeTextOnce(output, texts) : undefined;
  if (text) return ['outputTextRef', text];
  const json = JSON.stringify(output) ?? '';
  const ref = storeTextOnce(json, texts);
  return ref ? ['outputRef', ref] : ['output', json];
}

/**
 * A tool message content as a record stores it: `{content}`, or `{contentRef}` to the whole text,
 * with `contentCut` when the content is that text cut at those bytes (truncateResult): a
 * delegation's result cut at MESH_MAX_RESULT_BYTES refers to the child's whole answer.
 */
export function contentFieldsOf(
  whole: string,
  maxBytes: number | undefined,
  texts: TreeTexts,
): Pick<CallRecord, 'content' | 'contentRef' | 'contentCut'> {
  const content = maxBytes === undefined ? whole : truncateResult(whole, maxBytes);
  if (Buffer.byteLength(content, 'utf8') <= EVENT_INLINE_BYTES) return { content };
  const ref = storeTextOnce(whole, texts)!;
  return content === whole ? { contentRef: ref } : { contentRef: ref, contentCut: maxBytes! };
}

/** A record as stored: its large content and reply text referred to, added to `texts`. */
export function storedRecord(r: CallRecord, texts: TreeTexts): CallRecord {
  let out = r;
  if (r.content !== undefined) {
    const ref = storeTextOnce(r.content, texts);
    if (ref) {
      const { content: _, ...rest } = out;
      out = { ...rest, contentRef: ref };
    }
  }
  const reply = r.reply;
  const ref = reply?.content ? storeTextOnce(reply.content, texts) : undefined;
  if (reply && ref) out = { ...out, reply: { ...reply, content: null, contentRef: ref } };
  return out;
}

/** A stored record with its texts put back (a ref whose text is gone stays a ref). */
export function recordWithTexts(r: CallRecord, texts: ReadonlyMap<string, string>): CallRecord {
  let out = r;
  const content = r.contentRef === undefined ? undefined : texts.get(r.contentRef);
  if (content !== undefined) {
    const { contentRef: _, contentCut, ...rest } = out;
    out = { ...rest, content: contentCut === undefined ? content : truncateResult(content, contentCut) };
  }
  const reply = r.reply;
  const text = reply?.contentRef === undefined ? undefined : texts.get(reply.contentRef);
  if (reply && text !== undefined) {
    const { contentRef: _, ...rest } = reply;
    out = { ...out, reply: { ...rest, content: text } };
  }
  return out;
}

// A ref in a record's JSON: inside a JSON string every quote is escaped, so only a field matches.
const RECORD_REF = /"contentRef":"([0-9a-f]{64})"/g;

/** The refs of an invocation hash (its output) and of call records as stored (JSON). */
export function textRefsIn(state: Record<string, string> | undefined, records: Iterable<string>): string[] {
  const refs = new Set<string>();
  for (const f of ['outputRef', 'outputTextRef']) if (state?.[f]) refs.add(state[f]);
  for (const text of records) for (const m of text.matchAll(RECORD_REF)) refs.add(m[1]!);
  return [...refs];
}

/** The refs of decoded records (refs left in them: read without their texts). */
export function recordTextRefs(records: Iterable<CallRecord>): string[] {
  const refs = new Set<string>();
  for (const r of records) {
    if (r.contentRef !== undefined) refs.add(r.contentRef);
    if (r.reply?.contentRef !== undefined) refs.add(r.reply.contentRef);
  }
  return [...refs];
}

/** The part of an ioredis client reading a tree's texts needs. */
export interface TextReader {
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
}

/** Reads texts of tree `rootId` (one HMGET; none for no refs); a ref whose text is gone is left out. */
export async function readTreeTexts(
  redis: TextReader,
  keys: KeyLayout,
  rootId: string,
  refs: readonly string[],
): Promise<TreeTexts> {
  const texts: TreeTexts = new Map();
  if (refs.length === 0) return texts;
  const found = await redis.hmget(keys.texts(rootId), ...refs);
  refs.forEach((ref, i) => {
    const text = found[i];
    if (typeof text === 'string') texts.set(ref, text);
  });
  return texts;
}

/**
 * The JSON text of invocation `id`'s output, held inline or as a tree text (outputFieldOf);
 * undefined when it has none, or it is gone.
 */
export async function readOutputJson(
  redis: TextReader,
  keys: KeyLayout,
  id: string,
): Promise<string | undefined> {
  const root = rootOf(id);
  const [inline, json, text] = await redis.hmget(
    keys.invocation(root, id),
    'output',
    'outputRef',
    'outputTextRef',
  );
  if (inline !== null && inline !== undefined) return inline;
  const ref = json ?? text;
  if (!ref) return undefined;
  const found = (await readTreeTexts(redis, keys, root, [ref])).get(ref);
  if (found === undefined) return undefined;
  return json ? found : JSON.stringify(found);
}

/** The arguments that carry `texts` to a Lua step (lua/includes/store-texts.lua): their count, then ref, text pairs. */
export function textArgs(texts: TreeTexts): (string | number)[] {
  return [texts.size, ...[...texts].flat()];
}
