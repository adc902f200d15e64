import { type FakeScript, turnOf } from './fake-model.js';

/** The agents of a parent that delegates once to `child`. */
export const PARENT_AND_CHILD = `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`;

/**
 * The script of PARENT_AND_CHILD: the parent delegates `{prompt: "x"}` to the child, which answers
 * `child answer`; the parent then answers `parent got <what the child said>`. `latencyMs` slows the
 * first model call of the agents it names.
 */
export function parentAndChild(latencyMs: { parent?: number; child?: number } = {}): FakeScript {
  return (r) => {
    const slow = turnOf(r) === 0 ? (latencyMs[r.agent as 'parent' | 'child'] ?? 0) : 0;
    if (r.agent === 'child') return { final: 'child answer', latencyMs: slow };
    return turnOf(r) === 0
      ? { calls: [{ name: '_subagent_child', args: { prompt: 'x' } }], latencyMs: slow }
      : { final: `parent got ${r.messages.at(-1)!.content}` };
  };
}
