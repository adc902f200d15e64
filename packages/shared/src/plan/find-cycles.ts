/** Beyond this many steps the search stops; a config graph is tens of agents, never near it. */
const STEP_BUDGET = 100_000;

/**
 * Every cycle of the sub-agent graph, each once, as a closed walk starting and ending at the agent
 * on it declared first: `[a, b, a]`; a self-reference is `[a, a]`. `graph` maps each declared agent,
 * in declaration order, to the sub-agents it names (undeclared names are ignored here).
 */
export function findCycles(graph: Readonly<Record<string, readonly string[]>>): string[][] {
  const order = Object.keys(graph);
  const index = new Map(order.map((name, i) => [name, i]));
  const cycles: string[][] = [];
  let steps = 0;
  // every elementary cycle is found exactly once: from its first-declared agent, through later ones only
  order.forEach((start, first) => {
    const path = [start];
    const onPath = new Set(path);
    const visit = (node: string): void => {
      for (const next of new Set(graph[node] ?? [])) {
        if (++steps > STEP_BUDGET) return;
        const i = index.get(next);
        if (i === undefined || i < first) continue;
        if (next === start) cycles.push([...path, start]);
        else if (!onPath.has(next)) {
          path.push(next);
          onPath.add(next);
          visit(next);
          onPath.delete(path.pop()!);
        }
      }
    };
    visit(start);
  });
  return cycles;
}
