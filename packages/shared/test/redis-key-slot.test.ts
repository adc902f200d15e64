import t from 'tap';
import { keyLayout } from '../src/keys.js';
import { keySlot } from '../src/redis/key-slot.js';

t.test('keySlot computes what Redis Cluster computes, hash tags included', async (t) => {
  // Reference values: CLUSTER KEYSLOT on Redis 7 (and the cluster spec's CRC16 test vector).
  t.equal(keySlot('123456789'), 12739);
  t.equal(keySlot('foo'), 12182);
  t.equal(keySlot('{user1000}.following'), keySlot('user1000'));
  t.equal(keySlot('foo{}{bar}'), keySlot('foo{}{bar}'), 'an empty tag hashes the whole key');
  t.not(keySlot('foo{}{bar}'), keySlot('bar'));
  t.equal(keySlot('foo{{bar}}zap'), keySlot('{bar'));
});

t.test('every key outside a tree carries its own hash tag, tree keys their root one', async (t) => {
  const keys = keyLayout('mesh') as unknown as Record<string, (...a: string[]) => string>;
  const channels = Object.keys(keys).filter((k) => k.endsWith('Channel'));
  for (const name of Object.keys(keys)) {
    if (typeof keys[name] !== 'function' || channels.includes(name)) continue;
    const key = keys[name]!('inv_a', 'inv_a-b');
    t.match(key, /^mesh:\{[^{}]+\}/, `${name} (${key}) starts with a hash tag`);
  }
  const layout = keyLayout('mesh');
  const root = 'inv_0123';
  t.equal(keySlot(layout.calls(root, `${root}-x`)), keySlot(layout.events(root)), 'a tree shares one slot');
});
