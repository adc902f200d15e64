// drainWorkers' bounds: jobs held past the drain are requeued, and a worker that never
// finishes closing (its blocking connection still reconnecting after a Redis blip) does not hold
// the runner's shutdown forever.
import type { Worker } from 'bullmq';
import t from 'tap';
import { RequeueError } from '../src/loop/job-errors.js';
import { drainWorkers } from '../src/process/drain-workers.js';

/** A worker whose close() resolves when `closes` says so (never, when it never does). */
const worker = (closes: Promise<void>) => ({ close: () => closes }) as unknown as Worker;

t.test('workers that close in time: true, nothing requeued', async (t) => {
  const job = new AbortController();
  t.equal(await drainWorkers([worker(Promise.resolve())], new Map([['a', job]]), 1000, 1000), true);
  t.notOk(job.signal.aborted);
});

t.test('past the drain the jobs held are requeued; their end closes the workers', async (t) => {
  const job = new AbortController();
  const closes = new Promise<void>((r) => job.signal.addEventListener('abort', () => r()));
  t.equal(await drainWorkers([worker(closes)], new Map([['a', job]]), 10, 60_000), true);
  t.type(job.signal.reason, RequeueError);
});

t.test('a worker that never closes: false once the grace has passed, not a hang', async (t) => {
  const job = new AbortController();
  t.equal(await drainWorkers([worker(new Promise(() => {}))], new Map([['a', job]]), 10, 10), false);
  t.type(job.signal.reason, RequeueError);
});
