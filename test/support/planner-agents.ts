// The agents the REST description tests share (a planner with two tools and two sub-agents, one
// with its own input and output schema): their mesh.yaml entries, the tools' input schemas, and
// what GET /agents/planner must answer — on a gateway alone (services/gateway/test/agents.test.ts)
// and on a whole mesh, where the model must receive the same callables (test/gateway-invocations.test.ts).

export const pathInput = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
export const promptInput = {
  type: 'object',
  properties: { prompt: { type: 'string' } },
  required: ['prompt'],
  additionalProperties: false,
};
export const searchInput = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

/** The `agents:` entries of the config. */
export const PLANNER_AGENTS_YAML = `
  planner:
    description: Plans the work.
    instructions: "@agent planner"
    tools: [search, read_file]
    subagents: [reader, helper]
  reader:
    description: Reads one file and answers.
    instructions: "@agent reader"
    tools: [read_file]
    input: {type: object, properties: {path: {type: string}}, required: [path]}
    output: {type: object, properties: {answer: {type: string}}, required: [answer]}
  helper:
    description: "   "
    instructions: "@agent helper"
`;

/** GET /agents/planner's answer. */
export const planner = {
  name: 'planner',
  description: 'Plans the work.',
  input: promptInput,
  output: null,
  tools: ['search', 'read_file'],
  subagents: ['reader', 'helper'],
  callables: [
    { name: 'search', description: 'Searches the web.', parameters: searchInput },
    { name: 'read_file', description: 'Reads a file.', parameters: pathInput },
    {
      name: '_subagent_reader',
      description: 'Reads one file and answers. This is subagent.',
      parameters: pathInput,
    },
    {
      name: '_subagent_helper',
      description: 'Delegate a standalone task to sub-agent helper This is subagent.',
      parameters: promptInput,
    },
  ],
};
