/** Who is at fault for an error: decides whether it is retried and where it is reported. */
export type Fault = 'user' | 'model' | 'system';

/** One entry of the error registry. */
export interface ErrorSpec {
  status: number;
  retryable: boolean;
  fault: Fault;
  message: string;
}

/** Every stable error code of agentmesh, with its HTTP status, retryability and message template. */
export const ERROR_CODES = {
  invalid_json: {
    status: 400,
    retryable: false,
    fault: 'user',
    message: 'The request body is not valid JSON.',
  },
  invalid_input: {
    status: 400,
    retryable: false,
    fault: 'user',
    message: 'The input does not match the schema.',
  },
  unauthorized: { status: 401, retryable: false, fault: 'user', message: 'A valid API key is required.' },
  forbidden: {
    status: 403,
    retryable: false,
    fault: 'user',
    message: 'This API key may not use this agent.',
  },
  agent_not_found: { status: 404, retryable: false, fault: 'user', message: 'No agent is named {name}.' },
  invocation_not_found: {
    status: 404,
    retryable: false,
    fault: 'user',
    message: 'No invocation has id {id}.',
  },
  session_not_found: {
    status: 404,
    retryable: false,
    fault: 'user',
    message: 'No session has id {id}.',
  },
  session_conflict: {
    status: 409,
    retryable: false,
    fault: 'user',
    message: 'Session {id} belongs to another agent.',
  },
  session_busy: {
    status: 409,
    retryable: true,
    fault: 'user',
    message: 'Session {id} is running an invocation.',
  },
  tool_not_found: { status: 404, retryable: false, fault: 'user', message: 'Tool {name} does not exist.' },
  approval_not_found: {
    status: 404,
    retryable: false,
    fault: 'user',
    message: 'The invocation has no approval with call id {callId}.',
  },
  approval_conflict: {
    status: 409,
    retryable: false,
    fault: 'user',
    message: 'The approval was decided otherwise already.',
  },
  call_not_found: {
    status: 404,
    retryable: false,
    fault: 'user',
    message: 'The invocation has no call with call id {callId}.',
  },
  call_not_recorded: {
    status: 409,
    retryable: false,
    fault: 'user',
    message: 'Call {callId} has no final recorded outcome, so it cannot be reused.',
  },
  fork_too_large: {
    status: 422,
    retryable: false,
    fault: 'user',
    message: 'The invocation has too many recorded calls to fork.',
  },
  not_found: { status: 404, retryable: false, fault: 'user', message: 'Route {method} {url} not found.' },
  method_not_allowed: { status: 405, retryable: false, fault: 'user', message: 'Method not allowed.' },
  invalid_url: { status: 400, retryable: false, fault: 'user', message: 'The request URL is malformed.' },
  request_timeout: {
    status: 408,
    retryable: true,
    fault: 'user',
    message: 'The request was not received in time.',
  },
  payload_too_large: {
    status: 413,
    retryable: false,
    fault: 'user',
    message: 'The request body is too large.',
  },
  url_too_long: { status: 414, retryable: false, fault: 'user', message: 'The request URL is too long.' },
  unsupported_media_type: {
    status: 415,
    retryable: false,
    fault: 'user',
    message: 'Only application/json bodies are accepted.',
  },
  expectation_failed: {
    status: 417,
    retryable: false,
    fault: 'user',
    message: 'Only Expect: 100-continue is supported.',
  },
  idempotency_key_reused: {
    status: 422,
    retryable: false,
    fault: 'user',
    message: 'This Idempotency-Key was used with a different request.',
  },
  too_many_streams: {
    status: 429,
    retryable: true,
    fault: 'user',
    message: 'Too many open event streams; close one and retry.',
  },
  headers_too_large: {
    status: 431,
    retryable: false,
    fault: 'user',
    message: 'The request headers are too large.',
  },
  invalid_config: {
    status: 500,
    retryable: false,
    fault: 'user',
    message: 'The mesh configuration is invalid.',
  },
  invalid_output: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'The final answer does not match the output schema.',
  },
  max_iterations_exceeded: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'The agent reached its limit of {limit} iterations.',
  },
  max_depth_exceeded: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'Delegation depth limit {limit} reached.',
  },
  too_many_delegations: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'At most {limit} delegations are allowed in one turn.',
  },
  too_many_calls: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'At most {limit} calls are allowed in one model reply.',
  },
  budget_exceeded: {
    status: 422,
    retryable: false,
    fault: 'model',
    message: 'The token budget of {limit} tokens for this invocation tree is exhausted.',
  },
  agent_failed: { status: 502, retryable: false, fault: 'user', message: "The code agent's run threw." },
  subagent_failed: { status: 502, retryable: false, fault: 'model', message: 'The sub-agent failed.' },
  tool_failed: { status: 502, retryable: false, fault: 'system', message: 'The tool failed.' },
  tool_in_doubt: {
    status: 409,
    retryable: false,
    fault: 'system',
    message: 'The tool call may or may not have taken effect; it is not idempotent, so it was not repeated.',
  },
  tool_timeout: {
    status: 504,
    retryable: false,
    fault: 'system',
    message: 'The tool did not answer in time.',
  },
  model_unavailable: {
    status: 503,
    retryable: true,
    fault: 'system',
    message: 'The model endpoint is unavailable.',
  },
  model_timeout: {
    status: 504,
    retryable: true,
    fault: 'system',
    message: 'The model endpoint stopped sending.',
  },
  model_error: {
    status: 502,
    retryable: false,
    fault: 'system',
    message: 'The model endpoint refused the request.',
  },
  invalid_model_reply: {
    status: 502,
    retryable: false,
    fault: 'model',
    message: 'The model reply is malformed.',
  },
  deadline_exceeded: {
    status: 504,
    retryable: false,
    fault: 'system',
    message: 'The invocation ran past its deadline.',
  },
  cancelled: { status: 409, retryable: false, fault: 'user', message: 'The invocation was cancelled.' },
  plan_changed: {
    status: 409,
    retryable: false,
    fault: 'system',
    message: "The agent's definition changed while the invocation was in flight.",
  },
  too_many_recoveries: {
    status: 500,
    retryable: false,
    fault: 'system',
    message: 'The invocation was recovered after a crash too many times.',
  },
  unsupported_version: {
    status: 500,
    retryable: false,
    fault: 'system',
    message: 'Persisted data has an unknown version {version}.',
  },
  unavailable: { status: 503, retryable: true, fault: 'system', message: 'The service is not ready.' },
  internal: { status: 500, retryable: true, fault: 'system', message: 'Internal error.' },
} as const satisfies Record<string, ErrorSpec>;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `code` is one of the registry's codes (a code read from another service's answer). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** The HTTP status an error code maps to. */
export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

/** Fills `{name}` placeholders of a code's message template. */
export function messageOf(code: ErrorCode, params: Record<string, string | number> = {}): string {
  return ERROR_CODES[code].message.replace(/\{(\w+)\}/g, (m, k: string) =>
    params[k] === undefined ? m : String(params[k]),
  );
}
