import { fillArguments } from '../demo/model/fill-arguments.js';
import type { ConfigInspection } from './inspect-mesh-config.js';

/** The demo's question: the planner delegates its parts and calls the calculator. */
export const DEMO_PROMPT =
  'How does Redis persist data with the append-only file, how do BullMQ flows make a parent job wait for its children, and what is 2 * (16 + 4)?';
// Any other agent is asked to use what it has: the offline demo model then calls every callable.
const USE_ALL = 'Use all tools.';

/**
 * The invocation npm start suggests once ready: the demo's planner with its question, else the
 * config's first agent, asked to use all its tools (its input built from its schema).
 */
export function exampleInvoke(config: ConfigInspection): { agent: string; body: unknown } | undefined {
  const planner = config.agents.find((a) => a.name === 'planner');
  const properties = planner?.input?.properties as Record<string, unknown> | undefined;
  if (planner && properties && Object.keys(properties).join() === 'prompt')
    return { agent: 'planner', body: { prompt: DEMO_PROMPT } };
  const first = config.agents[0];
  if (!first) return undefined;
  return { agent: first.name, body: first.input ? fillArguments(first.input, USE_ALL) : { prompt: USE_ALL } };
}
