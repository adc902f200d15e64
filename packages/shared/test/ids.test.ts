import t from 'tap';
import { childId, isInvocationId, isRootId, newRootId, rootOf } from '../src/ids.js';

t.test('root ids are well formed and distinct across the random pool refills', async (t) => {
  const ids = Array.from({ length: 1000 }, () => newRootId()); // ~4 refills of 256 ids
  t.ok(ids.every(isRootId), 'inv_ + 32 hex digits');
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  // The bits are spread: every hex digit appears in every position of some id.
  const seen = Array.from({ length: 32 }, () => new Set<string>());
  for (const id of ids) for (let i = 0; i < 32; i++) seen[i]!.add(id[4 + i]!);
  t.ok(
    seen.every((s) => s.size === 16),
    'no position is fixed',
  );
});

t.test('a child id is deterministic and names its root', async (t) => {
  const root = newRootId();
  const child = childId(root, 't0-call0');
  t.equal(child, childId(root, 't0-call0'));
  t.not(child, childId(root, 't0-call1'));
  t.ok(isInvocationId(child));
  t.notOk(isRootId(child));
  t.equal(rootOf(childId(child, 't1-call0')), root, 'a grandchild too');
});
