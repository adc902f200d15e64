export { buildConfig } from './build-config.js';
export { assertToolReferences, checkToolReferences } from './check-tool-references.js';
export { ConfigError, formatConfigProblems } from './config-error.js';
export { deepFreeze } from './deep-freeze.js';
export { type ExpandedTree, expandEnv } from './expand-env.js';
export { loadConfig } from './load-config.js';
export { MeshConfigSchema } from './mesh-config-schema.js';
export { parseConfig } from './parse-config.js';
export { redactConfig } from './redact-config.js';
export type {
  AgentConfig,
  ConfigEnv,
  ConfigFormat,
  ConfigProblem,
  McpServerConfig,
  McpToolsEntry,
  MeshConfig,
  ModelConfig,
  RemoteAgentConfig,
  ToolsEntry,
} from './types.js';
