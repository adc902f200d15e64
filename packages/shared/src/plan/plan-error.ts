import { MeshError } from '../errors/mesh-error.js';

/** One thing wrong with the plan, located by agent, sub-agent entry and config path. */
export interface PlanProblem {
  /** The agent whose definition is wrong; absent for catalogue-wide problems. */
  agent?: string;
  /** The sub-agent entry at fault, when one is. */
  subagent?: string;
  /** Where in the config it is (`/agents/planner/subagents/1`), for the loader's report. */
  path: string;
  message: string;
}

/**
 * Every problem of a plan at once (upstream fails the whole setup: contract 15 in
 * docs/reference/upstream-contracts.md): code `invalid_config`.
 */
export class PlanError extends MeshError {
  readonly problems: PlanProblem[];

  constructor(problems: PlanProblem[]) {
    super(
      'invalid_config',
      problems.map(problemLine).join('\n'),
      problems.map((p) => ({ path: p.path, message: p.message })),
    );
    this.name = 'PlanError';
    this.problems = problems;
  }
}

/** `agent planner: Duplicate callable name: lookup`; a problem without an agent is its message alone. */
function problemLine(p: PlanProblem): string {
  return p.agent === undefined ? p.message : `agent ${p.agent}: ${p.message}`;
}
