/** The longest expression the calculator accepts, and how deep parentheses and signs may nest. */
export const MAX_EXPRESSION_LENGTH = 500;
const MAX_DEPTH = 100;

/** Why an expression could not be evaluated; `position` is the 0-based offset of the problem. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

/**
 * Evaluates an arithmetic expression with a recursive-descent parser (never `eval`):
 * `+ - * / %`, `^` (right-associative, binds tighter than unary minus: `-2^2` is -4),
 * parentheses, decimals (`.5`, `2.`) and unary signs. Division or modulo by zero throws.
 */
export function evaluateExpression(text: string): number {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`Expression is longer than ${MAX_EXPRESSION_LENGTH} characters.`, 0);
  }
  let pos = 0;
  let depth = 0;

  const skipSpaces = () => {
    while (pos < text.length && /\s/.test(text[pos]!)) pos++;
  };
  const peek = (): string | undefined => {
    skipSpaces();
    return text[pos];
  };
  const describe = (at: number) =>
    at >= text.length
      ? 'Unexpected end of expression'
      : `Unexpected character '${text[at]}' at position ${at}`;
  const nested = <T>(fn: () => T): T => {
    if (++depth > MAX_DEPTH)
      throw new ExpressionError(`Expression nests deeper than ${MAX_DEPTH} levels.`, pos);
    try {
      return fn();
    } finally {
      depth--;
    }
  };

  // expression := term (('+' | '-') term)*
  const expression = (): number => {
    let value = term();
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      pos++;
      value = op === '+' ? value + term() : value - term();
    }
    return value;
  };

  // term := unary (('*' | '/' | '%') unary)*
  const term = (): number => {
    let value = unary();
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      const at = pos++;
      const right = unary();
      if (op === '*') value *= right;
      else if (right === 0)
        throw new ExpressionError(`${op === '/' ? 'Division' : 'Modulo'} by zero at position ${at}.`, at);
      else value = op === '/' ? value / right : value % right;
    }
    return value;
  };

  // unary := ('-' | '+') unary | power
  const unary = (): number =>
    nested(() => {
      const op = peek();
      if (op === '-' || op === '+') {
        pos++;
        return op === '-' ? -unary() : unary();
      }
      return power();
    });

  // power := primary ('^' unary)?   (right-associative through unary)
  const power = (): number => {
    const base = primary();
    if (peek() !== '^') return base;
    pos++;
    return base ** unary();
  };

  // primary := number | '(' expression ')'
  const primary = (): number => {
    const c = peek();
    if (c === '(') {
      const open = pos++;
      const value = nested(expression);
      if (peek() !== ')') {
        const why = pos >= text.length ? `Missing ')' for '(' at position ${open}` : describe(pos);
        throw new ExpressionError(`${why}.`, pos);
      }
      pos++;
      return value;
    }
    const match = /^(\d+\.?\d*|\.\d+)/.exec(text.slice(pos));
    if (!match) throw new ExpressionError(`${describe(pos)}: expected a number or '('.`, pos);
    pos += match[0].length;
    return Number(match[0]);
  };

  if (peek() === undefined) throw new ExpressionError('Expression is empty.', 0);
  const value = expression();
  if (peek() !== undefined) throw new ExpressionError(`${describe(pos)}.`, pos);
  if (!Number.isFinite(value)) throw new ExpressionError('Result is not a finite number.', 0);
  // 0.1 + 0.2 reads as 0.3: twelve significant digits hide binary rounding noise.
  return Number(value.toPrecision(12));
}
