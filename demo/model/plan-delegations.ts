import { tokenize } from '../tools/search-corpus.js';
import { findComputation } from './find-computation.js';
import type { DemoTool } from './parse-chat-request.js';

/** One call the planner's reply makes: the function and its arguments. */
export interface PlannedToolCall {
  name: string;
  args: Record<string, unknown>;
}

const MAX_PARTS = 4;
// Words that only ask for a computation: a clause made of them (and numbers) is the calculator's.
const COMPUTE_WORDS = new Set(
  'compute calculate work out much many equal result value plus minus time multiplied divided percent mod modulo power'.split(
    ' ',
  ),
);
const CLAUSES = /(?<=[?!.;])\s+|,\s*(?:and|but|also|then|plus)\s+|\s+(?:and also|as well as)\s+/i;
const SOFT_CLAUSES = /,\s+|\s+and\s+/i;

/**
 * What a planner does with a question: the question split into two or more parts, each delegated to
 * one of the offered `_subagent_` tools (round robin, all in one reply so they run in parallel), plus
 * a `calculator` call when it is offered and the question asks for arithmetic.
 */
export function planDelegations(question: string, tools: DemoTool[]): PlannedToolCall[] {
  const subagents = tools.filter((t) => t.name.startsWith('_subagent_'));
  const computation = findComputation(question);
  const parts = splitQuestion(question);
  const calls: PlannedToolCall[] = parts.map((part, i) => {
    const tool = subagents[i % subagents.length]!;
    return { name: tool.name, args: argumentsFor(tool, part) };
  });
  const calculator = tools.find((t) => t.name === 'calculator');
  if (calculator && computation !== undefined)
    calls.push({ name: 'calculator', args: { expression: computation } });
  return calls;
}

/** The research parts of a question: its clauses minus pure arithmetic; at least two. */
export function splitQuestion(question: string): string[] {
  let parts = clean(question.split(CLAUSES)).filter((p) => !isOnlyArithmetic(p));
  if (parts.length < 2) {
    const softer = parts.flatMap((p) => clean(p.split(SOFT_CLAUSES)));
    // Split on a comma or "and" only when every piece still says something searchable.
    if (softer.length >= 2 && softer.every((p) => tokenize(p).length >= 2)) parts = softer;
  }
  if (parts.length === 0) parts = [question.trim()];
  if (parts.length === 1) parts.push(`Verify the facts behind: ${parts[0]}`);
  if (parts.length > MAX_PARTS)
    parts = [...parts.slice(0, MAX_PARTS - 1), parts.slice(MAX_PARTS - 1).join(' ')];
  return parts;
}

function clean(pieces: string[]): string[] {
  return pieces
    .map((p) => p.trim().replace(/^(?:and|also|then|plus)\b[\s,]*/i, ''))
    .filter((p) => p.length > 0);
}

function isOnlyArithmetic(clause: string): boolean {
  if (findComputation(clause) === undefined) return false;
  return tokenize(clause).filter((w) => !/^\d/.test(w) && !COMPUTE_WORDS.has(w)).length === 0;
}

// The sub-agent's parameters decide the arguments: `prompt` when it takes one (the usual shape),
// else the text in every required string property.
function argumentsFor(tool: DemoTool, text: string): Record<string, unknown> {
  const properties = (tool.parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  if ('prompt' in properties || Object.keys(properties).length === 0) return { prompt: text };
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) if (properties[name]?.type === 'string') args[name] = text;
  return args;
}
