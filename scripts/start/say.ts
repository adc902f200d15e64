/**
 * npm start's own words: `mesh | …` lines on a terminal, one JSON line each (level, message,
 * fields) otherwise, written to stdout beside its services' lines (mesh-output.ts).
 */
import { LEVELS, lineWriter, type MeshOutput } from '../mesh-output.js';

export type Say = (text: string, level?: number, fields?: Record<string, unknown>) => void;

export interface MeshVoice {
  say: Say;
  /** A heading and one line per problem; in JSON, one line with the problems as a field. */
  sayProblems(heading: string, problems: string[]): void;
}

export function meshVoice(output: MeshOutput): MeshVoice {
  const meshLine = lineWriter(output, 'mesh', process.stdout);
  const say: Say = (text, level = LEVELS.info, fields) => {
    if (output.format === 'json') return meshLine(text, level, fields);
    for (const line of text.split('\n')) meshLine(line);
  };
  const sayProblems = (heading: string, problems: string[]) => {
    if (output.format === 'json') return say(heading.replace(/:$/, ''), LEVELS.error, { problems });
    say(heading, LEVELS.error);
    for (const problem of problems) say(`  ${problem}`, LEVELS.error);
  };
  return { say, sayProblems };
}
