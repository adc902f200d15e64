// runActivation: a system fault's log line is written inside the activation's span, so that it
// carries the trace's ids like every other line of the activation (docs/reference/traces.md).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { type JobData, loggerOptions, startTracingWith } from '@agentmesh/shared';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Job } from 'bullmq';
import { pino } from 'pino';
import t from 'tap';
import { runActivation } from '../src/loop/steps/run-activation.js';
import type { RunnerContext } from '../src/loop/steps/runner-context.js';

const exporter = new InMemorySpanExporter();
const tracing = await startTracingWith([new SimpleSpanProcessor(exporter)]);
t.teardown(() => tracing.shutdown());

t.test("a system fault's line carries the trace and span ids of the activation it ended", async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  const fault = new Error('connect ECONNREFUSED 10.0.0.7:6379');
  const ctx = {
    runnerId: 'r1',
    plan: { agents: {} },
    codeAgents: {},
    store: { activate: () => Promise.reject(fault) },
    log: pino(loggerOptions('runner', 'info'), sink),
  } as unknown as RunnerContext;
  const traceId = randomBytes(16).toString('hex');
  const data = {
    v: 1,
    invocationId: 'inv_1',
    rootId: 'inv_1',
    agent: 'solo',
    traceparent: `00-${traceId}-${'ab'.repeat(8)}-01`,
  } as JobData;
  const job = { id: 'j1', data } as Job<JobData>;

  await t.rejects(runActivation(ctx, job, 'token', new AbortController().signal), fault);
  await new Promise((r) => setImmediate(r));
  const [activation] = exporter.getFinishedSpans().filter((s) => s.name === 'activation solo');
  t.ok(activation, 'the activation has its span');
  const line = lines.find((l) => l.msg === 'activation failed on a system fault; the job is retried');
  t.match(line, {
    level: 50,
    jobId: 'j1',
    invocationId: 'inv_1',
    err: fault.message,
    trace_id: traceId,
    span_id: activation?.spanContext().spanId,
  });
});
