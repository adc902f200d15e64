import t from 'tap';
import { compileSchema, describeValidation } from '../src/json/compile-schema.js';

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
  const nested = compileSchema({ type: 'object', properties: { a: { type: 'object', required: ['b/c'] } } });
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

t.test('a first-error check stops at the first problem; the default one reports every problem', async (t) => {
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
});

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
