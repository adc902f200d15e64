import type { DemoTool } from './parse-chat-request.js';

const SUBAGENT_PREFIX = '_subagent_';
/** The most calls one reply makes (the mesh's own default caps delegations per turn at 16). */
export const MAX_NAMED_CALLS = 16;
// "use all tools", "call all the tools", "try every tool", "all of your tools"…
const ALL_TOOLS = /\b(?:all\s+(?:of\s+)?(?:the\s+|your\s+|its\s+|my\s+)?tools|every\s+tool)\b/i;
const NAME_CHAR = /[A-Za-z0-9_-]/;

/**
 * The offered callables the user's text asks for (docs/guides/getting-started.md): every one when it says "use all
 * tools", else those it names — a tool by its name, a sub-agent by its name with or without
 * `_subagent_` — as whole words, case aside; in the order offered, at most MAX_NAMED_CALLS.
 */
export function namedCallables(text: string, tools: DemoTool[]): DemoTool[] {
  if (ALL_TOOLS.test(text)) return tools.slice(0, MAX_NAMED_CALLS);
  const lower = text.toLowerCase();
  return tools
    .filter((t) => {
      const name = t.name.toLowerCase();
      const bare = name.startsWith(SUBAGENT_PREFIX) ? name.slice(SUBAGENT_PREFIX.length) : name;
      return mentions(lower, name) || (bare !== name && mentions(lower, bare));
    })
    .slice(0, MAX_NAMED_CALLS);
}

/** `name` occurs in `text` as a whole word: no name character right before or after it. */
function mentions(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = text[at - 1];
    const after = text[at + name.length];
    if ((before === undefined || !NAME_CHAR.test(before)) && (after === undefined || !NAME_CHAR.test(after)))
      return true;
  }
  return false;
}
