// Results as JSON: normalization, narrowing, rendering for the model, schema checks.
export { compileSchema, describeValidation, type SchemaCheck, type SchemaVerdict } from './compile-schema.js';
export { narrowToSchema } from './narrow-to-schema.js';
export { isPlainObject, normalizeResult } from './normalize-result.js';
export { normalizeTypedResult } from './normalize-typed-result.js';
export { NOT_AN_OBJECT_REASON, type ParsedJsonObject, parseJsonObject } from './parse-json-object.js';
export {
  absorbStackOverflow,
  RESULT_ROOT,
  ResultNormalizationError,
  TOO_DEEP_MESSAGE,
} from './result-normalization-error.js';
export { toChatMessageContent } from './to-chat-message-content.js';
export { truncateResult, truncationMarker } from './truncate-result.js';
