import { evaluateExpression } from '../tools/evaluate-expression.js';

// Spelled-out arithmetic the demo understands, rewritten to operators before looking for an expression.
const WORDS: [RegExp, string][] = [
  [/(\d+(?:\.\d+)?)\s*(?:%|percent)\s+of\s+(\d+(?:\.\d+)?)/gi, '$2 * $1 / 100'],
  [/\b(?:multiplied by|times)\b/gi, '*'],
  [/\bdivided by\b/gi, '/'],
  [/\bplus\b/gi, '+'],
  [/\bminus\b/gi, '-'],
  [/\bto the power of\b/gi, '^'],
  [/\b(?:mod|modulo)\b/gi, '%'],
];

const RUN = /[\d.()+\-*/%^\s]+/g;
const HAS_OPERATION = /[\d.)]\s*[-+*/%^]\s*[-+(]*\s*\.?\d/;

/**
 * The arithmetic a question asks for, as an expression the calculator accepts — written out
 * (`(2 + 3) * 4`) or in words (`15% of 80`, `7 times 6`) — or undefined when there is none.
 */
export function findComputation(text: string): string | undefined {
  let rewritten = text;
  for (const [pattern, replacement] of WORDS) rewritten = rewritten.replace(pattern, replacement);
  const candidates = (rewritten.match(RUN) ?? [])
    .map((run) => balance(run.replace(/^(?:\.(?!\d)|\s)+|[\s.]+$/g, '')))
    .filter((run) => HAS_OPERATION.test(run))
    .sort((a, b) => b.length - a.length);
  return candidates.find((c) => {
    try {
      evaluateExpression(c);
      return true;
    } catch {
      return false;
    }
  });
}

// A run cut out of prose may carry a stray ")" of a remark or "(" of the next one.
function balance(run: string): string {
  let s = run.trim();
  for (let changed = true; changed; ) {
    changed = false;
    const open = (s.match(/\(/g) ?? []).length;
    const close = (s.match(/\)/g) ?? []).length;
    if (close > open && s.endsWith(')')) [s, changed] = [s.slice(0, -1).trim(), true];
    else if (open > close && s.startsWith('(')) [s, changed] = [s.slice(1).trim(), true];
  }
  return s;
}
