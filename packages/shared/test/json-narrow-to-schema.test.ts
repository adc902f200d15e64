import t from 'tap';
import { narrowToSchema } from '../src/json/narrow-to-schema.js';

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
  t.strictSame(narrowToSchema(value, { $ref: '#/$defs/A', $defs: { A: { properties: { a: {} } } } }), value);
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
