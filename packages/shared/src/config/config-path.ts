import { isRecord } from './is-record.js';

/** One step into a config tree: a mapping key or an array index. */
export type PathSegment = string | number;

// Keys shown bare after a dot; anything else is quoted in brackets (`agents["bad name"]`).
const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** Renders segments the way problems show them: `agents.planner.tools[0]`, `(root)` for none. */
export function formatPath(segments: readonly PathSegment[]): string {
  if (segments.length === 0) return '(root)';
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (BARE_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Renders one JSON pointer (`/agents/x/tools/0`) as segments, reading `root` to tell indexes from keys. */
export function pointerSegments(pointer: string, root: unknown): PathSegment[] {
  if (pointer === '') return [];
  const segments: PathSegment[] = [];
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      segments.push(Number(key));
      node = node[Number(key)];
    } else {
      segments.push(key);
      node = isRecord(node) ? node[key] : undefined;
    }
  }
  return segments;
}

/** The JSON pointer of segments, the form TypeBox errors and `ValuePointer` use. */
export function toPointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
