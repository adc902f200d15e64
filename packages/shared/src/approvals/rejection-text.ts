/**
 * The tool message a rejected call gives the model (docs/guides/approvals-and-budgets.md), by the callable's name:
 * `Tool <name> was not approved: <reason>`, for a delegation `Sub-agent _subagent_<name> was not
 * approved: <reason>`; without a reason the sentence ends after "approved".
 */
export function rejectionText(kind: string, callable: string, reason: string | undefined): string {
  const what = kind === 'subagent' ? `Sub-agent ${callable}` : `Tool ${callable}`;
  return reason?.trim() ? `${what} was not approved: ${reason}` : `${what} was not approved.`;
}
