// jsonDepth: nesting counted in one pass over the text, strings and escapes skipped.
import t from 'tap';
import { jsonDepth } from '../src/react/json-depth.js';

t.test('the depth counts arrays and objects, not brackets inside strings', async (t) => {
  t.equal(jsonDepth('1'), 0);
  t.equal(jsonDepth('{}'), 1);
  t.equal(jsonDepth('{"a":[{"b":[]}],"c":{}}'), 4);
  t.equal(jsonDepth('{"a":"[[[{{{"}'), 1);
  t.equal(jsonDepth('["\\"[[", []]'), 2, 'an escaped quote does not end the string');
});

t.test('the count stops as soon as it passes the limit', async (t) => {
  t.equal(jsonDepth(`${'['.repeat(1000)}${']'.repeat(1000)}`, 10), 11);
});
