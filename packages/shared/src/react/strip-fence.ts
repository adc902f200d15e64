/**
 * The answer inside a Markdown code fence (```` ```json ````): models often wrap JSON in one.
 * Text that is not exactly one fence, whitespace aside, comes back unchanged.
 */
export function stripFence(text: string): string {
  // A linear scan with the meaning of /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/, which
  // backtracked for seconds on "```\n" + 3000 newlines + "x" (issue 7, defect 2). Each loop
  // below and each indexOf/lastIndexOf walks a disjoint stretch at most once.
  let open = skipSpace(text, 0);
  if (!text.startsWith('```', open)) return text;
  open += 3;
  if (text.startsWith('json', open)) open += 4;
  const openEnd = skipSpace(text, open);
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  const close = end - 3;
  if (close <= open || !text.startsWith('```', close)) return text;
  let closeRun = close;
  while (closeRun > 0 && isSpace(text.charCodeAt(closeRun - 1))) closeRun--;
  // The last newline before the closing fence ends the body at the latest…
  const lastBreak = text.lastIndexOf('\n', close - 1);
  if (lastBreak < closeRun || lastBreak < open) return text;
  // …and the body starts after the last newline of the opening whitespace that precedes it.
  const from = Math.min(openEnd, lastBreak) - 1;
  const openBreak = from < open ? -1 : text.lastIndexOf('\n', from);
  if (openBreak < open) return text;
  const start = openBreak + 1;
  // The body is the shortest one: it ends at the first newline of the closing whitespace.
  const stop = text.indexOf('\n', Math.max(start, closeRun));
  return text.slice(start, stop);
}

/** The index of the first character at or after `i` that is not whitespace. */
function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** True for a UTF-16 code unit JavaScript's `\s` matches (WhiteSpace and LineTerminator). */
function isSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
