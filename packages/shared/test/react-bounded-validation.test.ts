// boundedValidation: a model-made value judged with work bounded by its size (docs/reference/bounds.md).
import t from 'tap';
import { boundedValidation } from '../src/react/bounded-validation.js';

const strings = { type: 'array', items: { type: 'string' } };

t.test('a valid value has no problems', async (t) => {
  t.equal(boundedValidation(strings, ['a'], 5), undefined);
});

t.test('a short value lists its first twenty problems and counts the rest', async (t) => {
  const value = new Array(25).fill(0);
  const first = Array.from({ length: 20 }, (_, i) => `/${i}: must be string`).join('; ');
  t.equal(boundedValidation(strings, value, JSON.stringify(value).length), `${first} (and 5 more)`);
});

t.test('a huge value wrong everywhere is judged by its first problem only, in linear time', async (t) => {
  // Every problem of it made two million Ajv errors: the timeout is the failure signal.
  t.setTimeout(2000);
  const value = new Array(2_000_000).fill(0);
  t.equal(boundedValidation(strings, value, 4_000_001), '/0: must be string');
});
