import { cutAtCharBoundary } from '../json/truncate-result.js';

/**
 * `value` (JSON data) with every string longer than `maxBytes` UTF-8 bytes cut to at most that,
 * at a character boundary; `truncated` says whether any was. Arrays and objects are copied.
 */
export function cutLongText(value: unknown, maxBytes: number): { value: unknown; truncated: boolean } {
  let truncated = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      // A UTF-16 unit takes at most 3 UTF-8 bytes: most strings need no byte count at all.
      if (v.length * 3 <= maxBytes || Buffer.byteLength(v, 'utf8') <= maxBytes) return v;
      truncated = true;
      return cutAtCharBoundary(Buffer.from(v, 'utf8'), maxBytes);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  const out = walk(value);
  return { value: out, truncated };
}
