// Port of upstream toChatMessageContent cases. Not ported, Java-only: the
// int array `new int[]{1,2}` and the Jackson JSON node `{"a":1}`; their TypeScript forms are the
// plain array and object cases below.
import t from 'tap';
import { toChatMessageContent } from '../src/json/to-chat-message-content.js';

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
