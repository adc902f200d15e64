import t from 'tap';
import { NOT_AN_OBJECT_REASON, parseJsonObject } from '../src/json/parse-json-object.js';

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
