import t from 'tap';
import { ReplayMemory } from '../src/loop/steps/code-agent/replay-memory.js';

t.test('writes are buffered as JSON until taken; a delete is an empty value', async (t) => {
  const memory = new ReplayMemory();
  await memory.set('a', { n: 1 });
  await memory.set('b', undefined);
  await memory.delete('a');
  t.strictSame(memory.take(), [
    ['a', '{"n":1}'],
    ['b', 'null'],
    ['a', ''],
  ]);
  t.strictSame(memory.take(), []);
  t.equal(await memory.get('a'), undefined);
  t.equal(await memory.get('b'), null);
});

t.test("a record's log replaces the writes re-executed before it and is applied in order", async (t) => {
  const memory = new ReplayMemory();
  await memory.set('count', 1);
  memory.apply([
    ['count', '1'],
    ['inside', '{"from":"step"}'],
    ['count', ''],
  ]);
  t.strictSame(memory.take(), [], 'committed writes are not committed again');
  t.equal(await memory.get('count'), undefined);
  t.strictSame(await memory.get('inside'), { from: 'step' });
});

t.test('a value read is a copy: changing it changes nothing stored', async (t) => {
  const memory = new ReplayMemory();
  await memory.set('list', [1]);
  const { get } = memory;
  (await get<number[]>('list'))!.push(2);
  t.strictSame(await memory.get('list'), [1]);
});
