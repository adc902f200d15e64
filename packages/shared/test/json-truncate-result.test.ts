import t from 'tap';
import { truncateResult, truncationMarker } from '../src/json/truncate-result.js';

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
