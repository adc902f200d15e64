import type { SdkAgent } from '../sdk-baseline.js';
import type { BenchContext } from './bench-context.js';

const AGENTS: SdkAgent[] = ['single', 'parent', 'parent', 'fan'];

/**
 * Runs single, parent and fan `runs` times in all, 10 at a time at latency 0, on the mesh (through
 * each client in turn, so the caller's code is warm too) and, unless told not to, on the SDK. V8
 * optimizes a function only after it ran many times, so a process that has served a handful of runs
 * is still several times slower than it will be: time nothing before this.
 */
export async function warmUp(ctx: BenchContext, runs: number, opts: { sdk: boolean }): Promise<void> {
  await ctx.model.setLatency(0);
  const each = Math.ceil(runs / 10);
  const mesh = ctx.clients.map((c) => c.invoke);
  const sides = opts.sdk ? [mesh, [ctx.sdk]] : [mesh];
  for (const runners of sides) {
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; i < each; i++) await runners[c % runners.length]!(AGENTS[(c + i) % AGENTS.length]!);
      }),
    );
  }
}
