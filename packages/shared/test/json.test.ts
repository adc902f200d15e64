// The JSON helpers (src/json/): parsing tool arguments, compiling and applying JSON Schemas, normalizing
// a sub-agent's result to JSON (untyped and typed) and its refusals, rendering a result as chat message
// content, and cutting an oversized result.
import t from 'tap';
import { isMeshError } from '../src/errors/mesh-error.js';
import { compileSchema, describeValidation } from '../src/json/compile-schema.js';
import { narrowToSchema } from '../src/json/narrow-to-schema.js';
import { normalizeResult } from '../src/json/normalize-result.js';
import { normalizeTypedResult } from '../src/json/normalize-typed-result.js';
import { NOT_AN_OBJECT_REASON, parseJsonObject } from '../src/json/parse-json-object.js';
import {
  absorbStackOverflow,
  ResultNormalizationError,
  TOO_DEEP_MESSAGE,
} from '../src/json/result-normalization-error.js';
import { toChatMessageContent } from '../src/json/to-chat-message-content.js';
import { truncateResult, truncationMarker } from '../src/json/truncate-result.js';

/** The ResultNormalizationError `walk` throws (normalizeResult's and normalizeTypedResult's refusals). */
function refusalOf(walk: () => unknown): ResultNormalizationError {
  try {
    walk();
  } catch (e) {
    if (e instanceof ResultNormalizationError) return e;
    throw e;
  }
  throw new Error('expected a ResultNormalizationError');
}

t.test('parseJsonObject', async (t) => {
  t.test('a JSON object is parsed into its value', async (t) => {
    t.strictSame(parseJsonObject('{"prompt":"review the diff","n":2}'), {
      ok: true,
      value: { prompt: 'review the diff', n: 2 },
    });
    t.strictSame(parseJsonObject(' {} '), { ok: true, value: {} });
  });

  t.test('text that is not JSON is refused with the parse error in the reason', async (t) => {
    const parseError = (() => {
      try {
        JSON.parse('{"prompt":');
      } catch (e) {
        return (e as Error).message;
      }
    })();
    const verdict = parseJsonObject('{"prompt":');
    t.strictSame(verdict, { ok: false, reason: `INVALID_ARGUMENT /: invalid JSON (${parseError})` });
    t.equal(parseJsonObject('').ok, false, 'empty arguments are not an object either');
  });

  t.test('JSON that is not an object is refused with the upstream wording', async (t) => {
    t.equal(NOT_AN_OBJECT_REASON, 'INVALID_ARGUMENT /: type (expected object)');
    for (const text of ['[1,2]', '"text"', '7', 'true', 'null']) {
      t.strictSame(
        parseJsonObject(text),
        { ok: false, reason: 'INVALID_ARGUMENT /: type (expected object)' },
        text,
      );
    }
  });

  t.test('a __proto__ key in the arguments stays an own property', async (t) => {
    const verdict = parseJsonObject('{"__proto__":{"x":1}}');
    t.ok(verdict.ok);
    if (verdict.ok) {
      t.equal(Object.getPrototypeOf(verdict.value), Object.prototype);
      t.ok(Object.hasOwn(verdict.value, '__proto__'));
    }
  });
});

t.test('compileSchema', async (t) => {
  const promptSchema = {
    type: 'object',
    properties: { prompt: { type: 'string' } },
    required: ['prompt'],
    additionalProperties: false,
  };

  t.test('a valid value passes', async (t) => {
    t.strictSame(compileSchema(promptSchema)({ prompt: 'review the diff' }), { ok: true });
  });

  t.test('a wrong type is reported at its JSON-pointer path', async (t) => {
    t.strictSame(compileSchema(promptSchema)({ prompt: 42 }), {
      ok: false,
      details: [{ path: '/prompt', message: 'must be string' }],
    });
  });

  t.test('a missing required property is reported at the path it should have had', async (t) => {
    t.strictSame(compileSchema(promptSchema)({}), {
      ok: false,
      details: [{ path: '/prompt', message: "must have required property 'prompt'" }],
    });
    const nested = compileSchema({
      type: 'object',
      properties: { a: { type: 'object', required: ['b/c'] } },
    });
    t.strictSame(nested({ a: {} }), {
      ok: false,
      details: [{ path: '/a/b~1c', message: "must have required property 'b/c'" }],
    });
  });

  t.test('a root error has the empty path', async (t) => {
    t.strictSame(compileSchema(promptSchema)('text'), {
      ok: false,
      details: [{ path: '', message: 'must be object' }],
    });
  });

  t.test('every error is reported, not only the first', async (t) => {
    const verdict = compileSchema({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'integer' } },
    })({
      a: 1,
      b: 'x',
    });
    t.strictSame(verdict, {
      ok: false,
      details: [
        { path: '/a', message: 'must be string' },
        { path: '/b', message: 'must be integer' },
      ],
    });
  });

  t.test('types are never coerced: a numeric string fails integer', async (t) => {
    const value = { n: '1' };
    const verdict = compileSchema({ type: 'object', properties: { n: { type: 'integer' } } })(value);
    t.strictSame(verdict, { ok: false, details: [{ path: '/n', message: 'must be integer' }] });
    t.equal(value.n, '1', 'the value is left as it was');
  });

  t.test('defaults are never applied to the value', async (t) => {
    const value: Record<string, unknown> = {};
    t.strictSame(
      compileSchema({ type: 'object', properties: { lines: { type: 'integer', default: 0 } } })(value),
      {
        ok: true,
      },
    );
    t.strictSame(value, {});
  });

  t.test('extra properties are never stripped', async (t) => {
    const value = { prompt: 'p', extra: true };
    const verdict = compileSchema(promptSchema)(value);
    t.strictSame(verdict, {
      ok: false,
      details: [{ path: '/extra', message: 'is not an allowed property' }],
    });
    t.strictSame(value, { prompt: 'p', extra: true });
    const open = { prompt: 'p', extra: true };
    t.strictSame(compileSchema({ type: 'object', properties: { prompt: { type: 'string' } } })(open), {
      ok: true,
    });
    t.strictSame(open, { prompt: 'p', extra: true });
  });

  t.test('string formats are checked and binary accepts any string', async (t) => {
    const check = compileSchema({
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        payload: { type: 'string', format: 'binary' },
      },
    });
    t.strictSame(check({ at: '2024-01-02T03:04:05Z', payload: '\u0000raw' }), { ok: true });
    t.strictSame(check({ at: 'yesterday' }), {
      ok: false,
      details: [{ path: '/at', message: 'must match format "date-time"' }],
    });
  });

  t.test('unknown keywords are tolerated', async (t) => {
    t.strictSame(compileSchema({ type: 'string', 'x-ui': 'textarea', title: 'T' })('ok'), { ok: true });
  });

  t.test('one schema object compiles once and the validator is reused', async (t) => {
    const schema = { type: 'string' };
    t.equal(compileSchema(schema), compileSchema(schema));
    t.not(compileSchema(schema), compileSchema({ type: 'string' }));
  });

  t.test('two schema objects with the same $id both compile', async (t) => {
    const first = compileSchema({ $id: 'https://agentmesh.dev/in', type: 'string' });
    const second = compileSchema({ $id: 'https://agentmesh.dev/in', type: 'integer' });
    t.strictSame(first('x'), { ok: true });
    t.strictSame(second(1), { ok: true });
    t.equal(second('x').ok, false);
  });

  t.test('a schema that refers to itself still validates after compilation', async (t) => {
    const tree = compileSchema({
      $id: 'https://agentmesh.dev/tree',
      type: 'object',
      properties: { children: { type: 'array', items: { $ref: '#' } } },
    });
    t.strictSame(tree({ children: [{ children: [] }] }), { ok: true });
    t.strictSame(tree({ children: [{ children: 1 }] }), {
      ok: false,
      details: [{ path: '/children/0/children', message: 'must be array' }],
    });
  });

  t.test('a schema that is not valid JSON Schema throws at compile time', async (t) => {
    t.throws(() => compileSchema({ type: 'nonsense' }));
  });

  t.test('describeValidation joins every problem on one line', async (t) => {
    t.equal(
      describeValidation([
        { path: '/prompt', message: 'must be string' },
        { path: '', message: 'must NOT have additional properties' },
      ]),
      '/prompt: must be string; /: must NOT have additional properties',
    );
    const verdict = compileSchema(promptSchema)({ prompt: 1 });
    t.equal(verdict.ok ? '' : describeValidation(verdict.details), '/prompt: must be string');
  });

  t.test(
    'a first-error check stops at the first problem; the default one reports every problem',
    async (t) => {
      const schema = { type: 'array', items: { type: 'string' } };
      t.strictSame(compileSchema(schema, { firstErrorOnly: true })([1, 2, 'ok', 3]), {
        ok: false,
        details: [{ path: '/0', message: 'must be string' }],
      });
      t.strictSame(compileSchema(schema)([1, 2, 'ok', 3]), {
        ok: false,
        details: [
          { path: '/0', message: 'must be string' },
          { path: '/1', message: 'must be string' },
          { path: '/3', message: 'must be string' },
        ],
      });
      t.strictSame(compileSchema(schema, { firstErrorOnly: true })(['a', 'b']), { ok: true });
    },
  );

  t.test(
    'a catastrophic pattern matches in linear time, so a hostile value cannot stall the process',
    async (t) => {
      // With JavaScript's backtracking engine this check takes longer than the universe has left.
      t.setTimeout(5000);
      const check = compileSchema({ type: 'string', pattern: '^(a+)+$' });
      t.same(check(`${'a'.repeat(100_000)}!`), {
        ok: false,
        details: [{ path: '', message: 'must match pattern "^(a+)+$"' }],
      });
      t.same(check('aaaa'), { ok: true });
      const keys = compileSchema({ type: 'object', patternProperties: { '^(x|x)*y$': { type: 'integer' } } });
      const verdict = keys({ [`${'x'.repeat(50_000)}y`]: 'no' });
      t.equal(verdict.ok, false, JSON.stringify(verdict).slice(0, 200));
    },
  );

  t.test('a pattern RE2 cannot run (lookaround, backreferences) is refused when compiled', async (t) => {
    t.throws(
      () => compileSchema({ type: 'string', pattern: '^(?=a)a$' }),
      /invalid or unsupported Perl syntax/,
    );
  });
});

t.test('narrowToSchema', async (t) => {
  const person = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      tags: { type: 'array', items: { type: 'object', properties: { id: {} } } },
    },
  };

  t.test(
    'properties the schema does not list are dropped even without additionalProperties false',
    async (t) => {
      t.strictSame(narrowToSchema({ name: 'ada', age: 36 }, person), { name: 'ada' });
      t.strictSame(narrowToSchema({ name: 'ada', age: 36 }, { ...person, additionalProperties: true }), {
        name: 'ada',
      });
    },
  );

  t.test('narrowing recurses through properties and array items', async (t) => {
    const value = { name: 'ada', tags: [{ id: 1, colour: 'red' }, { id: 2 }] };
    t.strictSame(narrowToSchema(value, person), { name: 'ada', tags: [{ id: 1 }, { id: 2 }] });
  });

  t.test('narrowing returns a copy and never mutates the value', async (t) => {
    const value = { name: 'ada', age: 36, tags: [{ id: 1, colour: 'red' }] };
    const before = structuredClone(value);
    const copy = narrowToSchema(value, person) as typeof value;
    t.strictSame(value, before);
    t.not(copy, value);
    t.not(copy.tags, value.tags);
  });

  t.test('a schema without properties keeps every property', async (t) => {
    t.strictSame(narrowToSchema({ a: 1, b: { c: 2 } }, { type: 'object' }), { a: 1, b: { c: 2 } });
  });

  t.test('extra properties stay when additionalProperties is itself a schema', async (t) => {
    const schema = { type: 'object', properties: { id: {} }, additionalProperties: { type: 'string' } };
    t.strictSame(narrowToSchema({ id: 1, label: 'x' }, schema), { id: 1, label: 'x' });
  });

  t.test(
    'a property declared with the schema true is kept as is and one declared false is dropped',
    async (t) => {
      const schema = { properties: { yes: true, no: false } };
      t.strictSame(narrowToSchema({ yes: { deep: 1 }, no: 2 }, schema), { yes: { deep: 1 } });
    },
  );

  t.test('anyOf, oneOf, allOf and $ref are not walked: the value is kept as is', async (t) => {
    const value = { a: 1, extra: 2 };
    for (const keyword of ['anyOf', 'oneOf', 'allOf']) {
      t.strictSame(narrowToSchema(value, { [keyword]: [{ properties: { a: {} } }] }), value, keyword);
    }
    t.strictSame(
      narrowToSchema(value, { $ref: '#/$defs/A', $defs: { A: { properties: { a: {} } } } }),
      value,
    );
  });

  t.test('a value whose shape differs from the schema is left for validation to judge', async (t) => {
    t.equal(narrowToSchema('text', person), 'text');
    t.strictSame(narrowToSchema([{ name: 'x', y: 1 }], person), [{ name: 'x', y: 1 }]);
    t.equal(narrowToSchema(null, person), null);
  });

  t.test('a null schema narrows nothing', async (t) => {
    const value = { a: 1 };
    t.equal(narrowToSchema(value, null), value);
  });
});

t.test('ResultNormalizationError', async (t) => {
  t.test('each refusal has the exact upstream wording', async (t) => {
    t.equal(
      ResultNormalizationError.nonStringKey('result').message,
      'Map keys in sub-agent result must be strings at result',
    );
    t.equal(
      ResultNormalizationError.nonFinite('result.ratio').message,
      'Non-finite number in sub-agent result at result.ratio',
    );
    t.equal(
      ResultNormalizationError.cycle('result.self').message,
      'Sub-agent result must be JSON-compatible at result.self, cycle detected',
    );
    t.equal(
      ResultNormalizationError.unsupported('result.outer[0]', 'Review').message,
      'Sub-agent result must be JSON-compatible at result.outer[0], found Review',
    );
  });

  t.test('a refusal is a MeshError with the subagent_failed code, its path and a detail', async (t) => {
    const e = ResultNormalizationError.nonFinite('result.score');
    t.ok(isMeshError(e, 'subagent_failed'));
    t.equal(e.name, 'ResultNormalizationError');
    t.equal(e.path, 'result.score');
    t.equal(e.retryable, false);
    t.strictSame(e.details, [
      { path: 'result.score', message: 'Non-finite number in sub-agent result at result.score' },
    ]);
  });

  t.test('a stack overflow inside the walk becomes the too-deep refusal at result', async (t) => {
    const recurse = (n: number): number => recurse(n + 1) + 1;
    try {
      absorbStackOverflow(() => recurse(0));
      t.fail('expected a refusal');
    } catch (e) {
      t.ok(e instanceof ResultNormalizationError);
      t.equal((e as ResultNormalizationError).message, TOO_DEEP_MESSAGE);
      t.equal((e as ResultNormalizationError).path, 'result');
    }
  });

  t.test('any other error passes through unchanged', async (t) => {
    const boom = new Error('boom');
    t.throws(
      () =>
        absorbStackOverflow(() => {
          throw boom;
        }),
      boom,
    );
    t.equal(
      absorbStackOverflow(() => 7),
      7,
    );
  });
});

t.test('normalizeResult', async (t) => {
  // Port of upstream ToolResultUtilsTest / test_tool_result_utils.py, untyped path.
  // Not ported, Java-only: the POJONode-inside-a-Jackson-tree case (`result.wrapped`, "POJONode is
  // not supported") and Java arrays (`new int[]{1,2}`); TypeScript has neither Jackson trees nor
  // primitive arrays, and a Uint8Array is refused instead (upstream contract 50 in
  // docs/reference/upstream-contracts.md, decided here).

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
    for (const scalar of ['done', '', 0, -1.5, 7, true, false, null])
      t.equal(normalizeResult(scalar), scalar);
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
});

t.test('normalizeTypedResult', async (t) => {
  // Port of upstream ToolResultUtilsTest / test_tool_result_utils.py, typed path. A
  // declared type is a JSON Schema here; Java's convertValue and pydantic's TypeAdapter become
  // "read class instances as plain data, then narrow to the schema". Not ported, Java-only: the
  // Jackson POJONode case and declaring `Object.class` (TypeScript declares nothing with null).

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
});

t.test('toChatMessageContent', async (t) => {
  // Port of upstream toChatMessageContent cases. Not ported, Java-only: the
  // int array `new int[]{1,2}` and the Jackson JSON node `{"a":1}`; their TypeScript forms are the
  // plain array and object cases below.

  t.test('null and undefined render as the text null', async (t) => {
    t.equal(toChatMessageContent(null), 'null');
    t.equal(toChatMessageContent(undefined), 'null');
  });

  t.test('a string result is passed as is, never JSON-quoted', async (t) => {
    t.equal(toChatMessageContent('done'), 'done');
    t.equal(toChatMessageContent('"quoted"'), '"quoted"');
    t.equal(toChatMessageContent(''), '');
  });

  t.test('numbers and booleans render as their text', async (t) => {
    t.equal(toChatMessageContent(7), '7');
    t.equal(toChatMessageContent(1.5), '1.5');
    t.equal(toChatMessageContent(true), 'true');
    t.equal(toChatMessageContent(false), 'false');
  });

  t.test('objects and arrays render as compact JSON', async (t) => {
    t.equal(toChatMessageContent({ a: 1 }), '{"a":1}');
    t.equal(toChatMessageContent([1, 2]), '[1,2]');
    t.equal(toChatMessageContent({ s: 'x y', n: null, l: [{}] }), '{"s":"x y","n":null,"l":[{}]}');
  });

  t.test('object keys keep their order', async (t) => {
    t.equal(toChatMessageContent({ z: 1, a: 2, m: 3 }), '{"z":1,"a":2,"m":3}');
  });
});

t.test('truncateResult', async (t) => {
  const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

  t.test('a result within the budget is returned unchanged', async (t) => {
    t.equal(truncateResult('hello', 5), 'hello');
    t.equal(truncateResult('', 0), '');
    t.equal(truncateResult('héllo', 6), 'héllo', 'the budget counts UTF-8 bytes');
  });

  t.test('an oversized result is cut and ends with the visible marker', async (t) => {
    const text = 'x'.repeat(123_456);
    const out = truncateResult(text, 65_536);
    t.equal(bytesOf(out), 65_536, 'the marker is included in the budget and the budget is used fully');
    t.equal(out, `${'x'.repeat(65_476)}\n…[truncated: 123456 bytes total, showing the first 65476]`);
  });

  t.test('the marker wording is pinned', async (t) => {
    t.equal(truncationMarker(10, 200), '\n…[truncated: 200 bytes total, showing the first 10]');
  });

  t.test('the cut never splits a multi-byte character', async (t) => {
    const text = '€'.repeat(100); // 3 bytes each, 300 bytes
    for (let budget = 60; budget <= 70; budget++) {
      const out = truncateResult(text, budget);
      t.ok(bytesOf(out) <= budget, `fits ${budget}`);
      t.notMatch(out, /\uFFFD/, 'no replacement character');
      const shown = Number(/showing the first (\d+)\]$/.exec(out)?.[1]);
      t.equal(shown % 3, 0, 'the number shown is whole characters');
      t.equal(bytesOf(out.slice(0, out.indexOf('\n…'))), shown, 'the marker states the bytes kept');
    }
  });

  t.test('a budget smaller than the marker cuts the text without a marker', async (t) => {
    t.equal(truncateResult('abcdefghijklmnopqrstuvwxyz'.repeat(4), 10), 'abcdefghij');
  });

  t.test('the result never exceeds the budget across digit-count boundaries', async (t) => {
    const text = 'y'.repeat(20_000);
    for (const budget of [55, 60, 64, 65, 66, 100, 1_000, 1_055, 1_060, 10_050, 10_060, 19_999]) {
      const out = truncateResult(text, budget);
      t.ok(bytesOf(out) <= budget, `fits ${budget}`);
      t.ok(bytesOf(out) >= budget - 1, `uses ${budget} up to one byte`);
    }
  });
});
