import { keyLayout, queueName } from '@agentmesh/shared';
import { freePort } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { inspectProcess } from '../support/inspector-gc.js';
import { rssMb } from '../support/rss-mb.js';
import { round } from '../support/spread.js';
import { stopOnExit } from '../support/stop-on-exit.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLIENTS = 32;

/**
 * `BENCH_PARKED` parents, each parked on one child that no runner hosts, on a runner hosting only
 * the parent: its RSS before, halfway and after, and Redis `used_memory` growth per parked
 * invocation (the parent, its call records and its queued child job). A fresh runner's heap grows
 * for its first few thousand runs whatever they are, so "flat" is judged on the second half: memory
 * kept per parked parent shows up there as growth. Each reading follows a full garbage collection in
 * the runner (through its inspector): read at any other moment, its RSS moves by tens of MiB with the
 * collector's timing, which said "not flat" of a runner that keeps nothing.
 */
export async function parkedParentsFigures(ctx: BenchContext): Promise<Figure[]> {
  const n = ctx.opts.parked;
  const inspectPort = await freePort();
  await ctx.mesh.setRunners(1, {
    RUNNER_AGENTS: 'pparent',
    NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}`,
  });
  const inspected = await inspectProcess(inspectPort);
  stopOnExit.add(() => inspected.close());
  await ctx.model.setLatency(0);
  const parkedKey = `${keyLayout('mesh').bullPrefix}:${queueName('pparent')}:waiting-children`;
  const parked = () => ctx.mesh.redis.zcard(parkedKey);
  const start = async () => {
    const res = await fetch(`${ctx.mesh.gatewayUrl}/agents/pparent/invoke?wait=0`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"prompt":"park"}',
    });
    if (res.status !== 202) throw new Error(`pparent: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  const startMany = (count: number) =>
    Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = c; i < count; i += CLIENTS) await start();
      }),
    );
  await startMany(100); // the runner's warm-up
  await waitUntil(
    async () => (await parked()) >= 100,
    60_000,
    () => 'the warm-up parents to park',
  );
  await sleep(1000);
  const runner = ctx.mesh.runners[0]!;
  const memory = async () => {
    await inspected.collectGarbage();
    return { rss: rssMb(runner.pid), heap: await inspected.heapUsedMb() };
  };
  const before = { ...(await memory()), redis: await usedMemory(ctx) };
  const base = await parked();
  const park = async (count: number, total: number) => {
    await startMany(count);
    await waitUntil(
      async () => (await parked()) >= base + total,
      60_000 + count * 20,
      () => `${total} parents to park`,
    );
    await sleep(2000);
    return memory();
  };
  const half = Math.floor(n / 2);
  const atHalf = await park(half, half);
  const rssHalf = atHalf.rss;
  const after = { ...(await park(n - half, n)), redis: await usedMemory(ctx) };
  inspected.close();
  const secondHalf = after.rss - rssHalf;
  const one = (x: number) => ({ p10: round(x), p50: round(x), p90: round(x) });
  return [
    figure('parked_runner_rss', 'MiB', one(after.rss), {
      target: 'flat: the second half of the parked parents adds ≤ 10 %',
      ok: secondHalf <= rssHalf * 0.1,
      extra: {
        parked: n,
        rssBefore: round(before.rss),
        rssHalf: round(rssHalf),
        rssAfter: round(after.rss),
        kibPerParkedSecondHalf: round((secondHalf * 1024) / Math.max(1, n - half)),
        heapBefore: round(before.heap),
        heapHalf: round(atHalf.heap),
        heapAfter: round(after.heap),
        heapKibPerParkedSecondHalf: round(((after.heap - atHalf.heap) * 1024) / Math.max(1, n - half)),
        measured: 'after a full garbage collection in the runner',
      },
    }),
    figure('parked_redis_bytes_per_invocation', 'bytes', one((after.redis - before.redis) / n), {
      target: 'reported',
      extra: { parked: n, usedMemoryBefore: before.redis, usedMemoryAfter: after.redis },
    }),
  ];
}

async function usedMemory(ctx: BenchContext): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await ctx.mesh.redis.info('memory'))![1]);
}
