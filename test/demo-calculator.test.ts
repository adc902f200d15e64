// The demo's calculator tool: a recursive-descent parser, never eval.
import t from 'tap';
import { evaluateExpression } from '../demo/tools/evaluate-expression.js';
import { calculator } from '../demo/tools/index.js';

t.test('multiplication and division bind tighter than addition and subtraction', async (t) => {
  t.equal(evaluateExpression('2 + 3 * 4'), 14);
  t.equal(evaluateExpression('20 - 6 / 3'), 18);
  t.equal(evaluateExpression('10 - 4 - 3'), 3, 'subtraction is left-associative');
  t.equal(evaluateExpression('17 % 5 + 1'), 3);
});

t.test('parentheses override precedence, at any depth', async (t) => {
  t.equal(evaluateExpression('(2 + 3) * 4'), 20);
  t.equal(evaluateExpression('((1 + 2) * (3 + 4)) / 7'), 3);
  t.equal(evaluateExpression(' 2*(16+4) '), 40, 'whitespace is optional');
});

t.test('unary minus applies to numbers, groups and itself, and binds looser than a power', async (t) => {
  t.equal(evaluateExpression('-5 + 2'), -3);
  t.equal(evaluateExpression('-(2 + 3)'), -5);
  t.equal(evaluateExpression('--4'), 4);
  t.equal(evaluateExpression('3 * -2'), -6);
  t.equal(evaluateExpression('-2 ^ 2'), -4);
  t.equal(evaluateExpression('2 ^ -1'), 0.5);
});

t.test('powers are right-associative and decimals are exact to twelve digits', async (t) => {
  t.equal(evaluateExpression('2 ^ 3 ^ 2'), 512);
  t.equal(evaluateExpression('0.1 + 0.2'), 0.3);
  t.equal(evaluateExpression('.5 * 4'), 2);
  t.equal(evaluateExpression('7 / 2'), 3.5);
});

t.test('division and modulo by zero throw with the position of the operator', async (t) => {
  t.throws(() => evaluateExpression('1 / 0'), {
    name: 'ExpressionError',
    message: 'Division by zero at position 2.',
  });
  t.throws(() => evaluateExpression('5 % (2 - 2)'), { message: 'Modulo by zero at position 2.' });
});

t.test('bad syntax throws a message that says what is wrong and where', async (t) => {
  t.throws(() => evaluateExpression(''), { message: 'Expression is empty.' });
  t.throws(() => evaluateExpression('2 +'), {
    message: "Unexpected end of expression: expected a number or '('.",
  });
  t.throws(() => evaluateExpression('(1 + 2'), { message: "Missing ')' for '(' at position 0." });
  t.throws(() => evaluateExpression('1 + 2)'), { message: "Unexpected character ')' at position 5." });
  t.throws(() => evaluateExpression('1.2.3'), { message: "Unexpected character '.' at position 3." });
  t.throws(() => evaluateExpression('10 ^ 400'), { message: 'Result is not a finite number.' });
  t.throws(() => evaluateExpression(`${'('.repeat(150)}1${')'.repeat(150)}`), /nests deeper than 100 levels/);
});

t.test('code is rejected, never run', async (t) => {
  for (const code of [
    'process.exit()',
    'require("fs")',
    'Math.PI',
    '1 + globalThis',
    '(() => 1)()',
    '2; process.exit(1)',
  ]) {
    t.throws(() => evaluateExpression(code), { name: 'ExpressionError' }, code);
  }
  t.throws(() => evaluateExpression('process.exit()'), {
    message: "Unexpected character 'p' at position 0: expected a number or '('.",
  });
});

t.test(
  'the tool is idempotent, declares its input schema and returns the expression with its result',
  async (t) => {
    t.equal(calculator.name, 'calculator');
    t.equal(calculator.idempotent, true);
    t.match(calculator.input, { type: 'object', required: ['expression'], additionalProperties: false });
    const result = await calculator.run({ expression: '2 * (16 + 4)' }, {} as never);
    t.strictSame(result, { expression: '2 * (16 + 4)', result: 40 });
  },
);
