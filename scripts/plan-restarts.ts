import type { CheckedConfig, FileRole } from './checked-config.js';

/** What `npm run dev` restarts: the tool-host, every runner, the gateway. */
export type Part = 'tool-host' | 'runners' | 'gateway';

/**
 * The parts a change affects (docs/guides/getting-started.md, `npm run dev`), from the roles of the files that changed
 * and the config the services run (`running`) against the one checked now (`next`):
 * - the tool-host imports the tools modules: a change to one, or to the config's `tools`, restarts it;
 * - runners build their plans from the config, the code agents and the tools' catalogue entries
 *   once, at start: any of those changed restarts them (a tool's code alone does not);
 * - the gateway reads the config and the code agents at start, and follows the catalogue itself.
 * Returned in the order they are restarted: the tool-host publishes the catalogue the others read.
 */
export function planRestarts(
  roles: ReadonlySet<FileRole>,
  running: CheckedConfig,
  next: CheckedConfig,
): Part[] {
  const parts: Part[] = [];
  const configOrAgents = roles.has('config') || roles.has('agents');
  if (roles.has('tools') || next.toolEntries !== running.toolEntries) parts.push('tool-host');
  if (configOrAgents || next.catalogue !== running.catalogue) parts.push('runners');
  if (configOrAgents) parts.push('gateway');
  return parts;
}
