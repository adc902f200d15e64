import type { ConfigInspection } from './inspect-mesh-config.js';

/** What a file is to the mesh: the config, part of a tools module, part of a code agent. */
export type FileRole = 'config' | 'tools' | 'agents';

/** A config as check-config.ts found it: its inspection, and every file each part loads. */
export interface CheckedConfig extends ConfigInspection {
  /** Each local file the config, its tools modules and its code agents import, with its roles. */
  watched: Record<string, FileRole[]>;
}

/** A check that could not look at the config at all (it crashed, or took too long). */
export function uncheckedConfig(file: string, why: string): CheckedConfig {
  return {
    problems: [why],
    roots: { config: file, tools: [], agents: [] },
    tools: [],
    catalogue: '[]',
    toolEntries: '[]',
    mcp: false,
    agents: [],
    watched: { [file]: ['config'] },
  };
}

/**
 * The files each root reaches through `imports` (importer → imported, absolute paths), outside
 * node_modules and the `ignored` directories (the mesh's own packages, which the services run
 * compiled): what a change to the config's parts can touch.
 */
export function watchedFiles(
  roots: ConfigInspection['roots'],
  imports: ReadonlyMap<string, ReadonlySet<string>>,
  ignored: readonly string[] = [],
): Record<string, FileRole[]> {
  const watched: Record<string, FileRole[]> = {};
  const mark = (start: string, role: FileRole) => {
    for (const queue = [start], seen = new Set<string>(); queue.length > 0; ) {
      const file = queue.pop()!;
      if (seen.has(file) || file.includes('/node_modules/') || ignored.some((d) => file.startsWith(d)))
        continue;
      seen.add(file);
      const roles = watched[file] ?? [];
      if (!roles.includes(role)) watched[file] = [...roles, role];
      queue.push(...(imports.get(file) ?? []));
    }
  };
  mark(roots.config, 'config');
  for (const file of roots.tools) mark(file, 'tools');
  for (const file of roots.agents) mark(file, 'agents');
  return watched;
}
