// The runner's embeddable part: tests start runners in-process.
export type { RunnerLimits } from './loop/steps/runner-context.js';
export { buildRunner, type Runner, type RunnerOptions } from './process/runner.js';
