// The pure core of agentmesh: schemas, config, the plan, normalization, decisions, errors, the key
// layout. No Redis client is reachable from here (packages/shared/test/package.test.ts reads the
// imports): what talks to Redis — connections, stores, Lua steps — is @agentmesh/shared/redis
// (redis-side.ts).
export * from './approvals/approval-fields.js';
export * from './approvals/approval-wire.js';
export { rejectionText } from './approvals/rejection-text.js';
export { checkExposure, type Exposure, isLoopback } from './auth/check-exposure.js';
export { type ApiKey, parseApiKeys } from './auth/parse-api-keys.js';
export { type CallDetailSource, callDetailOf } from './calls/call-detail-of.js';
export { cutLongText } from './calls/cut-long-text.js';
export * from './config/index.js';
export * from './defaults.js';
export * from './define.js';
export { codedError } from './errors/coded-error.js';
export {
  ERROR_CODES,
  type ErrorCode,
  type ErrorSpec,
  type Fault,
  isErrorCode,
  messageOf,
  statusOf,
} from './errors/error-codes.js';
export { type FrameworkError, frameworkErrorCode } from './errors/framework-error-code.js';
export { type ErrorBody, type ErrorDetail, isMeshError, MeshError } from './errors/mesh-error.js';
export { forkEvents } from './fork/fork-events.js';
export { type ForkPoint, type ForkRecordOptions, type ForkRecords, planFork } from './fork/plan-fork.js';
export {
  type ArrivalTimeouts,
  arrivalCheckMs,
  clientErrorHandler,
  DEFAULT_ARRIVAL,
  MAX_URL_BYTES,
  setArrivalTimeouts,
} from './http/client-errors.js';
export { WaitingConnections } from './http/waiting-connections.js';
export * from './ids.js';
export { importModule } from './import-module.js';
export * from './json/index.js';
export {
  type BullQueueKey,
  bullKeys,
  type KeyLayout,
  keyLayout,
  queueName,
  runnerClientName,
} from './keys.js';
export { type LoadedCodeAgent, loadCodeAgents } from './load-code-agents.js';
export * from './log/index.js';
export * from './plan/index.js';
export { boundedValidation } from './react/bounded-validation.js';
export { buildConversation, toolMessage } from './react/build-conversation.js';
export { type ChargedUsage, chargedUsage, estimateUsage } from './react/charged-usage.js';
export type { ChatMessage } from './react/chat-message.js';
export {
  decideNextStep,
  judgeFinal,
  MAX_OUTPUT_RETRIES,
  type NextStep,
  type PlannedCall,
  type StepLimits,
} from './react/decide-next-step.js';
export { subagentFailureText, toolFailureText, unknownToolText } from './react/failure-text.js';
export { initialMessages, userContent } from './react/initial-messages.js';
export { jsonDepth } from './react/json-depth.js';
export { MAX_CALL_TOKENS, reportedUsage, type TokenCounts, tokenCount } from './react/reported-usage.js';
export { type ServiceEnv, serviceEnv } from './service-env.js';
export * from './store/invocation-state.js';
export * from './store/session-message.js';
export * from './store/tree-texts.js';
export * from './trace/index.js';
export * from './wire/call-detail.js';
export * from './wire/call-record.js';
export * from './wire/fork-request.js';
export * from './wire/invocation-view.js';
export * from './wire/job-data.js';
export * from './wire/mesh-event.js';
export * from './wire/tool-call.js';
