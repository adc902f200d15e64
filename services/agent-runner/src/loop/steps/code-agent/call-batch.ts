import { type CodedError, codedError } from '@agentmesh/shared';
import type { RunnerLimits } from '../runner-context.js';

/**
 * The per-turn limits of a code agent (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md). A code agent's "turn" is the calls it
 * starts together: every `ctx.subagent` and `ctx.step` made before the result of any call reached
 * its code (`Promise.all([...])` starts them together; `await`ing each in a loop does not). A call
 * is counted synchronously when the code makes it, recorded ones included, so a replay counts the
 * same calls as the first run; a refusal is recorded, so the replay answers it from its record.
 * Counting follows the ReAct planner: the calls cap first, then delegations among the calls
 * within it.
 */
export class CallBatch {
  private calls = 0;
  private delegations = 0;

  constructor(private readonly limits: Pick<RunnerLimits, 'maxCallsPerTurn' | 'maxDelegationsPerTurn'>) {}

  /** Counts a call the code starts; returns why it is refused when it is past a limit. */
  admit(kind: 'subagent' | 'step'): CodedError | undefined {
    const index = this.calls++;
    const { maxCallsPerTurn, maxDelegationsPerTurn } = this.limits;
    if (index >= maxCallsPerTurn) {
      return codedError(
        'too_many_calls',
        `At most ${maxCallsPerTurn} calls (ctx.subagent and ctx.step) may be started together.`,
      );
    }
    if (kind === 'step') return undefined;
    if (this.delegations++ < maxDelegationsPerTurn) return undefined;
    return codedError('too_many_delegations', { limit: maxDelegationsPerTurn });
  }

  /** A call's result reached the code: what it starts next belongs to a new batch. */
  reset(): void {
    this.calls = 0;
    this.delegations = 0;
  }
}
