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
export type SdkAgent = 'single' | 'parent' | 'fan' | 'tokens' | 'burst';

/** When a streamed run's first text delta came and when it ended, in ms since `run()` was called. */
export interface SdkStreamTimes {
  firstDeltaMs: number;
  endMs: number;
}

/** The SDK's two ways to run an agent: to its end, and streamed. */
export interface SdkBaseline {
  run(agent: SdkAgent): Promise<string>;
  /** `run(agent, input, {stream: true})`, every event read as it comes, to the end. */
  stream(agent: SdkAgent): Promise<SdkStreamTimes>;
}

/**
 * The in-process baseline at its fastest (docs/reference/benchmarks.md): one OpenAI client (`maxRetries: 0`, keep-alive
 * through fetch's pool), Chat Completions, tracing off, one `Runner` reused for every run, and agents
 * built once; a parent delegates through `child.asTool()`, the SDK's own sub-agent call.
 */
export function sdkBaseline(baseURL: string): SdkBaseline {
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
    tokens: new Agent({ name: 'tokens', instructions: '@agent tokens', model }),
    burst: new Agent({ name: 'burst', instructions: '@agent burst', model }),
  };
  return {
    run: async (agent) => {
      const result = await runner.run(agents[agent], 'go');
      return String(result.finalOutput);
    },
    stream: async (agent) => {
      const t0 = performance.now();
      const result = await runner.run(agents[agent], 'go', { stream: true });
      let firstDeltaMs = Number.POSITIVE_INFINITY;
      for await (const event of result) {
        const text = event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta';
        if (text && firstDeltaMs === Number.POSITIVE_INFINITY) firstDeltaMs = performance.now() - t0;
      }
      await result.completed;
      return { firstDeltaMs, endMs: performance.now() - t0 };
    },
  };
}
