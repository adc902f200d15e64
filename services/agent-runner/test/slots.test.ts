// The runner's slots: a take activates its job only while one is free (take-activation.ts), and
// an activation that had to wait for one says so (its model call is then checked again).
import t from 'tap';
import { Slots } from '../src/queue/slots.js';

t.test('slots are taken in order; free counts none while any activation waits', async (t) => {
  const slots = new Slots(2);
  t.equal(slots.free, 2);
  t.equal(await slots.acquire(), false, 'a free slot: no wait');
  t.equal(await slots.acquire(), false);
  t.equal(slots.free, 0);
  const order: string[] = [];
  const a = slots.acquire().then((waited) => order.push(`a ${waited}`));
  const b = slots.acquire().then((waited) => order.push(`b ${waited}`));
  t.equal(slots.free, 0);
  slots.release();
  await a;
  t.strictSame(order, ['a true'], 'the longest waiter gets the slot released, and says it waited');
  t.equal(slots.free, 0, 'b still waits');
  slots.release();
  await b;
  t.strictSame(order, ['a true', 'b true']);
  slots.release();
  t.equal(slots.free, 1);
  t.equal(slots.inUse, 1);
});
