import { callerTraceparent, formatTraceparent, invocationSpanId, parseTraceparent } from '@agentmesh/shared';
import t from 'tap';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

t.test('a W3C traceparent parses to its span context and formats back', async (t) => {
  const sc = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
  t.same(sc, { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
  t.equal(formatTraceparent(sc!), `00-${TRACE}-${SPAN}-01`);
  t.equal(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 0 }), `00-${TRACE}-${SPAN}-00`);
  t.equal(
    parseTraceparent(`01-${TRACE}-${SPAN}-01-later-fields`)?.spanId,
    SPAN,
    'a later version may add fields',
  );
});

t.test('a malformed traceparent names no span', async (t) => {
  for (const bad of [
    undefined,
    '',
    'garbage',
    `00-${TRACE}-${SPAN}-01-extra`,
    `ff-${TRACE}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-01${'x'.repeat(1000)}`,
  ])
    t.equal(parseTraceparent(bad), undefined, String(bad).slice(0, 60));
});

t.test("an invocation's span id is the same wherever it is derived, and differs by invocation", async (t) => {
  t.equal(invocationSpanId(TRACE, 'inv_a'), invocationSpanId(TRACE, 'inv_a'));
  t.not(invocationSpanId(TRACE, 'inv_a'), invocationSpanId(TRACE, 'inv_b'));
  t.match(invocationSpanId(TRACE, 'inv_a'), /^[0-9a-f]{16}$/);
});

t.test("with tracing off the caller's traceparent is passed on unchanged", async (t) => {
  t.equal(callerTraceparent(`00-${TRACE}-${SPAN}-01`), `00-${TRACE}-${SPAN}-01`);
  t.equal(callerTraceparent(undefined), undefined);
  t.equal(callerTraceparent(`00-${TRACE}-${SPAN}`), undefined, 'a malformed one is dropped');
});
