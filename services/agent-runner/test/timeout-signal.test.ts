// timeoutSignal (services/agent-runner/src/loop/timeout-signal.ts): the signal of a call bounded
// by its caller's signal and a timeout, whose timer and listener never outlive what they are for.
import t from 'tap';
import { timeoutSignal } from '../src/loop/timeout-signal.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

t.test("aborts with the caller's reason, and its timer goes at once", async (t) => {
  const caller = new AbortController();
  const before = timers();
  const bounded = timeoutSignal(caller.signal, 60_000);
  t.equal(timers(), before + 1, 'a timer while the call runs');
  caller.abort(new Error('cancelled'));
  t.equal(bounded.signal.reason.message, 'cancelled');
  t.equal(timers(), before, 'no timer left to hold the process for a minute');
});

t.test('aborts with a TimeoutError after ms, and stops listening to the caller', async (t) => {
  const caller = new AbortController();
  const bounded = timeoutSignal(caller.signal, 10);
  await new Promise((resolve) => bounded.signal.addEventListener('abort', resolve, { once: true }));
  t.equal((bounded.signal.reason as DOMException).name, 'TimeoutError');
  caller.abort(new Error('later'));
  t.equal((bounded.signal.reason as DOMException).name, 'TimeoutError', 'the first reason stays');
});

t.test('clear() ends the timer; an aborted caller aborts it at once', async (t) => {
  const before = timers();
  const bounded = timeoutSignal(new AbortController().signal, 60_000);
  bounded.clear();
  t.equal(timers(), before);
  t.notOk(bounded.signal.aborted);
  const gone = AbortSignal.abort(new Error('already'));
  t.equal(timeoutSignal(gone, 60_000).signal.reason.message, 'already');
  t.equal(timers(), before);
});
