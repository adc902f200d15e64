// wakeDecidedParks: the watchdog's line about a parked invocation it wakes carries that
// invocation's trace (its invoke_agent span), though no activation of it is running (docs/reference/traces.md).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { invocationSpanId, loggerOptions, startTracingWith } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import { pino } from 'pino';
import t from 'tap';
import { wakeDecidedParks } from '../src/loop/steps/approvals/wake-decided-parks.js';

const tracing = await startTracingWith([]);
t.teardown(() => tracing.shutdown());

t.test(
  "waking a parked invocation is logged in the trace of that invocation's invoke_agent span",
  async (t) => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    });
    const traceId = randomBytes(16).toString('hex');
    let promoted = 0;
    const job = {
      id: 'j1',
      data: { v: 1, invocationId: 'inv_1', traceparent: `00-${traceId}-${'ab'.repeat(8)}-01` },
      promote: async () => void promoted++,
    };
    const queue = { getDelayed: async () => [job] } as unknown as Queue;
    // Every approval decided: the invocation no longer waits.
    const redis = { hmget: async () => ['waiting', 'j1', null, '0'] } as unknown as MeshRedis;

    await wakeDecidedParks(redis, queue, (id) => `inv:${id}`, pino(loggerOptions('runner', 'info'), sink));
    await new Promise((r) => setImmediate(r));
    t.equal(promoted, 1);
    t.match(lines, [
      {
        msg: 'waking an invocation parked on a decided approval',
        invocationId: 'inv_1',
        trace_id: traceId,
        span_id: invocationSpanId(traceId, 'inv_1'),
      },
    ]);
  },
);
