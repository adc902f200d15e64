import type { KeyLayout, MeshConfig, ModelConfig } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Agent } from 'undici';
import type { ChatModel } from '../loop/model/chat-model.js';
import { ConcurrencyLimitedModel } from '../loop/model/concurrency-limited-model.js';
import { DEFAULT_MODEL_RETRY, OpenAIChatModel } from '../loop/model/openai-chat-model.js';

/**
 * A chat model client per config model entry, by name: the OpenAI-compatible client unless a
 * factory is given, limited across the mesh (through Redis) when the entry sets `maxConcurrency`.
 */
export function buildModels(
  config: MeshConfig,
  deps: {
    redis: MeshRedis;
    keys: KeyLayout;
    dispatcher: Agent;
    maxModelReplyBytes: number;
    modelIdleMs: number;
    /** The first retry delay of a failed model attempt (RunnerLimits `modelRetryMs`). */
    modelRetryMs: number;
    modelFactory?: ((config: ModelConfig) => ChatModel) | undefined;
  },
): Map<string, ChatModel> {
  const models = new Map<string, ChatModel>();
  const retry = { ...DEFAULT_MODEL_RETRY, baseDelayMs: deps.modelRetryMs };
  for (const [name, m] of Object.entries(config.models)) {
    const client = deps.modelFactory
      ? deps.modelFactory(m)
      : new OpenAIChatModel(m, deps.dispatcher, retry, deps.maxModelReplyBytes, deps.modelIdleMs);
    models.set(
      name,
      m.maxConcurrency
        ? new ConcurrencyLimitedModel(client, deps.redis, deps.keys.modelSlots(name), m.maxConcurrency)
        : client,
    );
  }
  return models;
}
