import { SUBAGENT_PREFIX } from '../plan/types.js';
import { namesOf } from './check-references.js';
import { formatPath } from './config-path.js';
import type { ConfigProblem } from './types.js';

/**
 * An agent entry's `approvals:` (docs/guides/approvals-and-budgets.md): the callables whose calls wait for a human. Each
 * must be one the agent has — a tool it lists, or `_subagent_<name>` of a sub-agent it lists —
 * and only a ReAct agent takes the key (a code agent asks with `ctx.approval()`).
 */
export function normalizeApprovals(
  name: string,
  raw: Record<string, unknown>,
  has: { tools: string[]; subagents: string[]; react: boolean },
  file: string,
): { approvals?: string[]; problems: ConfigProblem[] } {
  if (!Array.isArray(raw.approvals)) return { problems: [] };
  const problems: ConfigProblem[] = [];
  const at = (...path: (string | number)[]) => formatPath(['agents', name, 'approvals', ...path]);
  if (!has.react) {
    const message = 'only a ReAct agent takes approvals; a code agent asks with ctx.approval()';
    return { problems: [{ file, path: at(), message }] };
  }
  const callables = [...has.tools, ...has.subagents.map((s) => `${SUBAGENT_PREFIX}${s}`)];
  const approvals: string[] = [];
  (raw.approvals as unknown[]).forEach((entry, i) => {
    if (typeof entry !== 'string') return; // the schema reports it
    if (approvals.includes(entry)) {
      problems.push({ file, path: at(i), message: `${JSON.stringify(entry)} is listed twice` });
    } else if (!callables.includes(entry)) {
      problems.push({
        file,
        path: at(i),
        message: `unknown callable ${JSON.stringify(entry)}: the agent has no such tool or sub-agent (callables: ${namesOf(callables)})`,
      });
    }
    approvals.push(entry);
  });
  return { approvals, problems };
}
