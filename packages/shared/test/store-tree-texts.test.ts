// A tree's large texts (tree-texts.ts): what a write refers to instead of storing, and how a read
// puts it back, as the invocation's hash and its call records hold them.
import t from 'tap';
import { truncateResult } from '../src/json/truncate-result.js';
import { decodeCalls, decodeInvocation } from '../src/store/invocation-state.js';
import {
  contentFieldsOf,
  outputFieldOf,
  recordTextRefs,
  recordWithTexts,
  storedRecord,
  type TreeTexts,
  textRefsIn,
} from '../src/store/tree-texts.js';
import type { CallRecord } from '../src/wire/call-record.js';

const big = `answer:${'a'.repeat(20_000)}`;
const reply = (content: string | null): CallRecord => ({
  v: 1,
  callId: 't0-model',
  kind: 'model',
  name: 'm',
  status: 'succeeded',
  startedAt: 'x',
  reply: { content, toolCalls: [], usage: { promptTokens: 1, completionTokens: 2 } },
});
const delegation = (content: string): CallRecord => ({
  v: 1,
  callId: 't0-call0',
  kind: 'subagent',
  name: 'child',
  status: 'succeeded',
  startedAt: 'x',
  content,
});

t.test('a text of 16 KiB or less stays where it is, in the exact shape it had', async (t) => {
  const texts: TreeTexts = new Map();
  const small = 'b'.repeat(16 * 1024);
  t.strictSame(storedRecord(reply(small), texts), reply(small));
  t.strictSame(storedRecord(delegation(small), texts), delegation(small));
  t.strictSame(outputFieldOf({ answer: 'x' }, texts), ['output', '{"answer":"x"}']);
  // An output's stored value is its JSON: a string's has two quotes more.
  t.strictSame(outputFieldOf(small.slice(2), texts), ['output', JSON.stringify(small.slice(2))]);
  t.strictSame(contentFieldsOf(small, 65536, texts), { content: small });
  t.equal(texts.size, 0, 'nothing to store apart');
});

t.test('one answer as output, reply and tool message is one text, and reads back whole', async (t) => {
  const texts: TreeTexts = new Map();
  const [field, ref] = outputFieldOf(big, texts);
  t.equal(field, 'outputTextRef', 'a string output refers to itself as text');
  const stored = storedRecord(reply(big), texts);
  t.strictSame(stored.reply, { ...reply(big).reply, content: null, contentRef: ref });
  t.strictSame(contentFieldsOf(big, undefined, texts), { contentRef: ref });
  t.strictSame([...texts.keys()], [ref], 'stored once');
  const state = decodeInvocation({ v: '1', id: 'i', status: 'succeeded', outputTextRef: ref }, texts);
  t.equal(state.output, big);
  const calls = decodeCalls({ 't0-model': JSON.stringify(stored) }, texts);
  t.strictSame(calls, [reply(big)], 'the record as it was written');
  t.strictSame(textRefsIn({ outputTextRef: ref }, [JSON.stringify(stored)]), [ref]);
  t.strictSame(recordTextRefs([stored]), [ref]);
});

t.test('a structured output refers to its JSON; a cut tool message to the whole text', async (t) => {
  const texts: TreeTexts = new Map();
  const output = { answer: big };
  const [field, ref] = outputFieldOf(output, texts);
  t.equal(field, 'outputRef');
  t.same(decodeInvocation({ v: '1', id: 'i', outputRef: ref }, texts).output, output);
  const fields = contentFieldsOf(big, 18_000, new Map());
  t.match(fields, { contentCut: 18_000 });
  t.equal(fields.content, undefined, 'no copy of the cut');
  const { content: _, ...stored } = delegation('');
  const read = recordWithTexts({ ...stored, ...fields }, new Map([[fields.contentRef!, big]]));
  t.equal(read.content, truncateResult(big, 18_000), 'the cut, as truncateResult makes it');
  const small = truncateResult(big, 8000);
  t.strictSame(contentFieldsOf(big, 8000, new Map()), { content: small }, 'a cut of 16 KiB or less stays');
});

t.test('a text that is gone leaves its ref; a ref-like text inside a content is none', async (t) => {
  const texts: TreeTexts = new Map();
  const stored = storedRecord(delegation(big), texts);
  t.strictSame(recordWithTexts(stored, new Map()), stored);
  t.equal(decodeInvocation({ v: '1', id: 'i', outputRef: 'f'.repeat(64) }).output, undefined);
  const quoted = delegation(`"contentRef":"${'a'.repeat(64)}"`);
  t.strictSame(
    textRefsIn(undefined, [JSON.stringify(quoted)]),
    [],
    'inside a JSON string every quote is escaped',
  );
});
