// The runner's embeddable part: tests start runners in-process.
export { buildRunner, type Runner, type RunnerOptions } from './process/runner.js';
