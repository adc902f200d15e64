import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';

/** The in-process baseline: the OpenAI Agents SDK, a parent with `child.asTool()`, same fake model. */
export function sdkBaseline(baseURL: string) {
  setTracingDisabled(true);
  const client = new OpenAI({ baseURL, apiKey: 'bench' });
  const model = new OpenAIChatCompletionsModel(client, 'fake');
  const child = new Agent({ name: 'child', instructions: '@agent child', model });
  const tool = child.asTool({ toolName: '_subagent_child', toolDescription: 'Answers. This is subagent.' });
  const agents = {
    single: new Agent({ name: 'single', instructions: '@agent single', model }),
    parent: new Agent({ name: 'parent', instructions: '@agent parent', model, tools: [tool] }),
    fan: new Agent({ name: 'fan', instructions: '@agent fan', model, tools: [tool] }),
  };
  return async (agent: keyof typeof agents): Promise<void> => {
    await run(agents[agent], 'go');
  };
}
