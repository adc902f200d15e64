import type { FakeScript } from './fake-model.js';

/** The agents of a small traced tree: a planner with the tool `calc` and the sub-agent `helper`. */
export const PLANNER_AND_HELPER = `
  planner: {instructions: "@agent planner", tools: [calc], subagents: [helper]}
  helper: {instructions: "@agent helper"}
`;

/** The script of PLANNER_AND_HELPER: the planner calls calc and delegates in one turn, then answers `done`; helper answers at once. */
export const plannerAndHelper: FakeScript = (r) => {
  if (r.agent === 'helper') return { final: 'helped' };
  return r.messages.some((m) => m.role === 'tool')
    ? { final: 'done' }
    : {
        calls: [
          { name: 'calc', args: { x: 1 } },
          { name: '_subagent_helper', args: { prompt: 'help' } },
        ],
      };
};
