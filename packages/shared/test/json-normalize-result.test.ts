// Port of upstream ToolResultUtilsTest / test_tool_result_utils.py, untyped path.
// Not ported, Java-only: the POJONode-inside-a-Jackson-tree case (`result.wrapped`, "POJONode is
// not supported") and Java arrays (`new int[]{1,2}`); TypeScript has neither Jackson trees nor
// primitive arrays, and a Uint8Array is refused instead (upstream contract 50 in
// docs/reference/upstream-contracts.md, decided here).
import t from 'tap';
import { normalizeResult } from '../src/json/normalize-result.js';
import { ResultNormalizationError, TOO_DEEP_MESSAGE } from '../src/json/result-normalization-error.js';

function refusalOf(walk: () => unknown): ResultNormalizationError {
  try {
    walk();
  } catch (e) {
    if (e instanceof ResultNormalizationError) return e;
    throw e;
  }
  throw new Error('expected a ResultNormalizationError');
}

function nest(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

class Review {
  approved = true;
}

t.test('nested containers become plain objects and arrays', async (t) => {
  const inner = new Map<string, unknown>([['k', [1, 'two', null]]]);
  const value = Object.assign(Object.create(null) as object, { outer: { inner }, list: [[true], {}] });
  const copy = normalizeResult(value);
  t.strictSame(copy, { outer: { inner: { k: [1, 'two', null] } }, list: [[true], {}] });
  t.equal(Object.getPrototypeOf(copy), Object.prototype);
  t.not(copy, value);
});

t.test('scalars and null pass through unchanged', async (t) => {
  for (const scalar of ['done', '', 0, -1.5, 7, true, false, null]) t.equal(normalizeResult(scalar), scalar);
});

t.test('an unsupported value is refused with its path and type', async (t) => {
  const e = refusalOf(() => normalizeResult({ outer: [new Review()] }));
  t.equal(e.path, 'result.outer[0]');
  t.equal(e.message, 'Sub-agent result must be JSON-compatible at result.outer[0], found Review');
});

t.test('a Map with a non-string key is refused at the path of the Map', async (t) => {
  const e = refusalOf(() => normalizeResult(new Map<unknown, unknown>([[1, 'one']])));
  t.equal(e.message, 'Map keys in sub-agent result must be strings at result');
  t.equal(e.path, 'result');
});

t.test('NaN is refused at its property path and Infinity at the root', async (t) => {
  t.equal(
    refusalOf(() => normalizeResult({ ratio: Number.NaN })).message,
    'Non-finite number in sub-agent result at result.ratio',
  );
  t.equal(
    refusalOf(() => normalizeResult(Number.POSITIVE_INFINITY)).message,
    'Non-finite number in sub-agent result at result',
  );
  t.equal(refusalOf(() => normalizeResult([Number.NEGATIVE_INFINITY])).path, 'result[0]');
});

t.test('arrays are walked by index', async (t) => {
  t.strictSame(normalizeResult([1, 2]), [1, 2]);
  t.equal(
    refusalOf(() => normalizeResult([Symbol('s')])).message,
    'Sub-agent result must be JSON-compatible at result[0], found symbol',
  );
  const holey: number[] = [1];
  holey[2] = 3;
  t.equal(refusalOf(() => normalizeResult(holey)).path, 'result[1]', 'a hole is an undefined element');
});

t.test('an object that contains itself is refused as a cycle', async (t) => {
  const m: Record<string, unknown> = { name: 'm' };
  m['self'] = m;
  t.equal(
    refusalOf(() => normalizeResult(m)).message,
    'Sub-agent result must be JSON-compatible at result.self, cycle detected',
  );
});

t.test('a cycle through an array and a Map is refused with its path', async (t) => {
  const list: unknown[] = [];
  const map = new Map<string, unknown>([['back', list]]);
  list.push(map);
  t.equal(
    refusalOf(() => normalizeResult({ list })).message,
    'Sub-agent result must be JSON-compatible at result.list[0].back, cycle detected',
  );
});

t.test('one object reachable from two siblings is normalized twice, not refused', async (t) => {
  const shared = { n: 1 };
  const copy = normalizeResult({ left: shared, right: [shared] }) as { left: object; right: object[] };
  t.strictSame(copy, { left: { n: 1 }, right: [{ n: 1 }] });
  t.not(copy.left, copy.right[0]);
});

t.test('a result nested 200 deep normalizes intact', async (t) => {
  const deep = nest(200, 'bottom');
  t.strictSame(normalizeResult(deep), deep);
});

t.test('a stack overflow while walking becomes a refusal, not a crash', async (t) => {
  const e = refusalOf(() => normalizeResult(nest(100_000, 'bottom')));
  t.equal(e.message, TOO_DEEP_MESSAGE);
  t.equal(e.message, 'Sub-agent result is cyclic or too deeply nested to normalize as JSON');
  t.equal(e.path, 'result');
});

t.test('values JSON cannot express are refused with their type', async (t) => {
  const found = (value: unknown) => refusalOf(() => normalizeResult({ v: value })).message;
  t.equal(found(10n), 'Sub-agent result must be JSON-compatible at result.v, found bigint');
  t.equal(
    found(() => 1),
    'Sub-agent result must be JSON-compatible at result.v, found function',
  );
  t.equal(found(Symbol('s')), 'Sub-agent result must be JSON-compatible at result.v, found symbol');
  t.equal(found(new Date(0)), 'Sub-agent result must be JSON-compatible at result.v, found Date');
  t.equal(
    found(new Uint8Array([1])),
    'Sub-agent result must be JSON-compatible at result.v, found Uint8Array',
  );
  t.equal(found(Buffer.from('x')), 'Sub-agent result must be JSON-compatible at result.v, found Buffer');
  t.equal(found(new Set([1])), 'Sub-agent result must be JSON-compatible at result.v, found Set');
  t.equal(
    refusalOf(() => normalizeResult(undefined)).message,
    'Sub-agent result must be JSON-compatible at result, found undefined',
  );
  t.equal(refusalOf(() => normalizeResult([undefined])).path, 'result[0]');
});

t.test('a class instance is refused without a declared type', async (t) => {
  t.equal(
    refusalOf(() => normalizeResult(new Review())).message,
    'Sub-agent result must be JSON-compatible at result, found Review',
  );
});

t.test('an object property whose value is undefined is dropped as JSON.stringify drops it', async (t) => {
  const copy = normalizeResult({ a: 1, gone: undefined, m: new Map([['x', undefined]]) });
  t.strictSame(copy, { a: 1, m: {} });
  t.notOk(Object.hasOwn(copy as object, 'gone'));
});

t.test('a __proto__ key stays data and does not change the prototype', async (t) => {
  const copy = normalizeResult(JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(copy), Object.prototype);
  t.strictSame(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true });
});

t.test('a refusal carries the subagent_failed code and its path as a detail', async (t) => {
  const e = refusalOf(() => normalizeResult({ ratio: Number.NaN }));
  t.equal(e.code, 'subagent_failed');
  t.strictSame(e.details, [{ path: 'result.ratio', message: e.message }]);
});
