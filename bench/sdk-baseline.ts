import {
  Agent,
  OpenAIChatCompletionsModel,
  Runner,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
} from '@openai/agents';
import OpenAI from 'openai';

/** The agents the SDK side runs, named like the mesh's. */
export type SdkAgent = 'single' | 'parent' | 'fan';

/**
 * The in-process baseline at its fastest (docs/performance.md): one OpenAI client (`maxRetries: 0`, keep-alive
 * through fetch's pool), Chat Completions, tracing off, one `Runner` reused for every run, and agents
 * built once; a parent delegates through `child.asTool()`, the SDK's own sub-agent call.
 */
export function sdkBaseline(baseURL: string): (agent: SdkAgent) => Promise<string> {
  setTracingDisabled(true);
  setOpenAIAPI('chat_completions');
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0 });
  setDefaultOpenAIClient(client);
  const model = new OpenAIChatCompletionsModel(client, 'fake');
  const runner = new Runner({ tracingDisabled: true });
  const child = new Agent({ name: 'child', instructions: '@agent child', model });
  const tool = child.asTool({ toolName: '_subagent_child', toolDescription: 'Answers. This is subagent.' });
  const agents = {
    single: new Agent({ name: 'single', instructions: '@agent single', model }),
    parent: new Agent({ name: 'parent', instructions: '@agent parent', model, tools: [tool] }),
    fan: new Agent({ name: 'fan', instructions: '@agent fan', model, tools: [tool] }),
  };
  return async (agent) => {
    const result = await runner.run(agents[agent], 'go');
    return String(result.finalOutput);
  };
}
