import { SUBAGENT_PREFIX } from '../plan/types.js';

/**
 * The tool message a failed delegation gives the model (upstream contract 37 in
 * docs/reference/upstream-contracts.md, Java wording).
 */
export function subagentFailureText(subagent: string, reason: string | undefined): string {
  const callable = `${SUBAGENT_PREFIX}${subagent}`;
  return reason?.trim()
    ? `Sub-agent ${callable} execute failed: ${reason}`
    : `Sub-agent ${callable} execute failed.`;
}

/** The tool message a failed tool call gives the model (**TS**: with the reason, unlike upstream). */
export function toolFailureText(tool: string, reason: string | undefined): string {
  return reason?.trim() ? `Tool ${tool} execute failed: ${reason}` : `Tool ${tool} execute failed.`;
}

/** The tool message for a tool the agent does not have (upstream contract 39). */
export function unknownToolText(tool: string): string {
  return `Tool ${tool} does not exist.`;
}
