import type { Writable } from 'node:stream';
import type { LogFormat } from '@agentmesh/shared/settings';

/** How npm start writes: its children's format, and the width of the `name |` column (pretty). */
export interface MeshOutput {
  format: LogFormat;
  width: number;
}

/** pino's level numbers, for the lines npm start writes itself. */
export const LEVELS = { info: 30, warn: 40, error: 50 } as const;

const COLORS = [36, 33, 35, 32, 34, 96, 93, 95];
// A colour per name, in the order their writers are made, the same on stdout and stderr.
const colorOf = new Map<string, number>();

/**
 * A writer of `name`'s lines. Pretty: `name | line`, the name coloured on a terminal. JSON: a
 * child's JSON line as it is, anything else (npm start's own words, a crash message, Redis's
 * output) as a pino-shaped line `{level, time, service, msg}`, so every line parses.
 */
export function lineWriter(
  output: MeshOutput,
  name: string,
  to: Writable,
): (line: string, level?: number, fields?: Record<string, unknown>) => void {
  if (output.format === 'json') {
    return (line, level = LEVELS.info, fields = {}) => {
      if (isJsonObject(line)) return void to.write(`${line}\n`);
      to.write(`${JSON.stringify({ level, time: Date.now(), service: name, msg: line, ...fields })}\n`);
    };
  }
  if (!colorOf.has(name)) colorOf.set(name, COLORS[colorOf.size % COLORS.length]!);
  const color = colorOf.get(name)!;
  const label = name.padEnd(output.width);
  const prefix = (to as { isTTY?: boolean }).isTTY ? `\x1b[${color}m${label} |\x1b[0m ` : `${label} | `;
  return (line) => void to.write(`${prefix}${line}\n`);
}

function isJsonObject(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}
