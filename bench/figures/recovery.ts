import { runnerPid } from '@agentmesh/test-support/runner-pid';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import type { BenchContext } from '../support/bench-context.js';
import { RECOVERY_CALL_MS } from '../support/bench-script.js';
import { type Figure, figure } from '../support/figure.js';
import { spread } from '../support/spread.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two runners; an invocation whose first model call is slow is started, the runner holding it is
 * SIGKILLed mid-call, and the time from the kill until it succeeded elsewhere is the figure (the
 * re-issued model call answers at once, so all of it is recovery). A new runner replaces the dead one.
 * The kill waits for the call to reach the fake model, not only for its record: a call killed on
 * its way would reach the model first when re-issued, and be answered slowly then.
 */
export async function recoveryFigure(ctx: BenchContext): Promise<Figure[]> {
  await ctx.mesh.setRunners(2);
  const extra: number[] = [];
  for (let k = 0; k < ctx.opts.recoveries; k++) {
    await ctx.model.startTrace();
    const res = await fetch(`${ctx.mesh.gatewayUrl}/agents/slow/invoke?wait=0`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: `recover ${k}` }),
    });
    const { id } = (await res.json()) as { id: string };
    const view = async () =>
      (await (await fetch(`${ctx.mesh.gatewayUrl}/invocations/${id}`)).json()) as {
        status: string;
        calls: { kind: string; status: string; runner?: string }[];
      };
    const holder = await waitUntil(
      async () => (await view()).calls.find((c) => c.kind === 'model' && c.runner)?.runner,
      RECOVERY_CALL_MS,
      () => `a runner to start ${id}'s model call`,
    );
    await waitUntil(
      async () => (await ctx.model.peekTrace()).some((a) => a.agent === 'slow'),
      RECOVERY_CALL_MS,
      () => `${id}'s model call to reach the model`,
    );
    await ctx.model.stopTrace();
    const killedAt = performance.now();
    await ctx.mesh.killRunner(runnerPid(holder));
    for (;;) {
      const { status } = await view();
      if (status === 'succeeded') break;
      if (['failed', 'cancelled'].includes(status)) throw new Error(`recovery trial ${k}: ${status}`);
      await sleep(20);
    }
    extra.push(performance.now() - killedAt);
    ctx.note(`recovery: trial ${k + 1}/${ctx.opts.recoveries}`);
    await ctx.mesh.addRunner();
  }
  return [
    figure('recovery_after_sigkill', 'ms', spread(extra), {
      target: '≤ 5000 ms extra',
      ok: spread(extra).p50 <= 5000,
      extra: { trials: extra.length, lockMs: Number(process.env.RUNNER_LOCK_MS ?? 3000) },
    }),
  ];
}
