// Port of upstream ToolResultUtilsTest / test_tool_result_utils.py, typed path. A
// declared type is a JSON Schema here; Java's convertValue and pydantic's TypeAdapter become
// "read class instances as plain data, then narrow to the schema". Not ported, Java-only: the
// Jackson POJONode case and declaring `Object.class` (TypeScript declares nothing with null).
import t from 'tap';
import { normalizeResult } from '../src/json/normalize-result.js';
import { normalizeTypedResult } from '../src/json/normalize-typed-result.js';
import { ResultNormalizationError, TOO_DEEP_MESSAGE } from '../src/json/result-normalization-error.js';
import { toChatMessageContent } from '../src/json/to-chat-message-content.js';

function refusalOf(walk: () => unknown): ResultNormalizationError {
  try {
    walk();
  } catch (e) {
    if (e instanceof ResultNormalizationError) return e;
    throw e;
  }
  throw new Error('expected a ResultNormalizationError');
}

class Review {
  approved = true;
  note = 'clean';
  score = 1.5;
  get summary(): string {
    return `${this.note} (${this.score})`;
  }
}

const reviewSchema = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, note: { type: 'string' }, score: { type: 'number' } },
};

t.test('a declared type reads a class instance as plain data', async (t) => {
  const copy = normalizeTypedResult(new Review(), reviewSchema);
  t.equal(toChatMessageContent(copy), '{"approved":true,"note":"clean","score":1.5}');
  t.equal(Object.getPrototypeOf(copy), Object.prototype);
});

t.test('a declared type narrows a wider object to the listed properties', async (t) => {
  const wider = { approved: true, note: 'clean', score: 1.5, secret: 'token', debug: { trace: [1] } };
  t.strictSame(normalizeTypedResult(wider, reviewSchema), { approved: true, note: 'clean', score: 1.5 });
  t.equal(wider.secret, 'token', 'the value itself is not mutated');
});

t.test('a declared type reads class instances nested in arrays and Maps', async (t) => {
  const schema = { type: 'object', properties: { reviews: { type: 'array', items: reviewSchema } } };
  const value = new Map<string, unknown>([
    ['reviews', [new Review()]],
    ['dropped', 1],
  ]);
  t.strictSame(normalizeTypedResult(value, schema), {
    reviews: [{ approved: true, note: 'clean', score: 1.5 }],
  });
});

t.test('without a declared type a class instance is refused', async (t) => {
  const e = refusalOf(() => normalizeTypedResult(new Review(), null));
  t.equal(e.message, 'Sub-agent result must be JSON-compatible at result, found Review');
});

t.test('a null schema behaves exactly like the untyped path', async (t) => {
  const value = { a: [1, { b: 'c' }], extra: true };
  t.strictSame(normalizeTypedResult(value, null), normalizeResult(value));
  t.equal(refusalOf(() => normalizeTypedResult({ n: Number.NaN }, null)).path, 'result.n');
});

t.test('a declared type still refuses Infinity at result.score', async (t) => {
  const review = Object.assign(new Review(), { score: Number.POSITIVE_INFINITY });
  t.equal(
    refusalOf(() => normalizeTypedResult(review, reviewSchema)).message,
    'Non-finite number in sub-agent result at result.score',
  );
});

t.test('a declared type still refuses a Date, a Uint8Array and a bigint', async (t) => {
  const schema = { type: 'object', properties: { v: {} } };
  const found = (v: unknown) => refusalOf(() => normalizeTypedResult({ v }, schema)).message;
  t.equal(found(new Date(0)), 'Sub-agent result must be JSON-compatible at result.v, found Date');
  t.equal(
    found(new Uint8Array([1])),
    'Sub-agent result must be JSON-compatible at result.v, found Uint8Array',
  );
  t.equal(found(1n), 'Sub-agent result must be JSON-compatible at result.v, found bigint');
});

t.test('a declared type refuses a cycle with the same path as the untyped walk', async (t) => {
  const review: Review & { self?: unknown } = new Review();
  review.self = review;
  t.equal(
    refusalOf(() => normalizeTypedResult(review, { type: 'object' })).message,
    'Sub-agent result must be JSON-compatible at result.self, cycle detected',
  );
});

t.test('a declared type accepts one instance reachable from two siblings', async (t) => {
  const shared = new Review();
  const schema = { type: 'object', properties: { a: reviewSchema, b: reviewSchema } };
  t.strictSame(normalizeTypedResult({ a: shared, b: shared }, schema), {
    a: { approved: true, note: 'clean', score: 1.5 },
    b: { approved: true, note: 'clean', score: 1.5 },
  });
});

t.test('a stack overflow on the typed path becomes a refusal, not a crash', async (t) => {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 100_000; i++) deep = { next: deep };
  const e = refusalOf(() => normalizeTypedResult(deep, { type: 'object' }));
  t.equal(e.message, TOO_DEEP_MESSAGE);
  t.equal(e.path, 'result');
});
